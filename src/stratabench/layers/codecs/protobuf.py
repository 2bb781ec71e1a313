"""The ``protobuf`` codec: Google's protobuf runtime (upb), schema built at run time.

Needs ``protobuf`` (extra ``codecs``); no ``protoc``. The message classes
are made from a ``descriptor_pb2.FileDescriptorProto`` written from the
:class:`~.base.Schema`, added to a private ``DescriptorPool``: a proto3
message ``Record`` with one field per schema field (numbered from 1, in
order), and a wrapper ``RecordList`` with one repeated ``Record`` field,
``records = 1``.

Field types: ``bool``, ``int64``, ``double``, ``string``, ``bytes``,
``repeated string`` and ``repeated int64`` (packed); ``time_ns`` is an
``int64`` count of nanoseconds (exact, and one varint rather than a
``google.protobuf.Timestamp`` sub-message per record); ``time_us`` is an
``int64`` count of microseconds, the way App Engine's own entity protobuf
stored datetimes.

One mode, ``typed``: ``decode`` is ``RecordList.FromString`` and returns the
wrapper message. With the upb runtime the parse is complete, but Python
objects for records and fields are made lazily, on access, from upb's arena;
that arena is allocated outside Python's allocator, so tracemalloc figures
undercount it. The format is therefore lazy (:attr:`.base.Format.lazy`): its
``access`` reads the first field of every record through the message API.

What it cannot do: ``any`` fields (protobuf needs a type for every value);
strings that are not valid UTF-8 (lone surrogates); integers outside the
signed 64-bit range.
"""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stratabench.datasets.schema import Row, Schema, datetime_from_us, us_from_datetime
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format, FunctionFormat, row_converter

__all__ = ["PACKAGE", "ProtobufCodec", "message_classes"]

PACKAGE = "stratabench.codecs"
"""The protobuf package of the generated messages."""


def message_classes(schema: Schema) -> tuple[Any, Any]:
    """Build the ``Record`` and ``RecordList`` message classes of ``schema``.

    Returns
    -------
    (record, record_list)
        Message classes from a private descriptor pool, so two schemas of
        the same name never collide.
    """
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    field_proto = descriptor_pb2.FieldDescriptorProto
    scalar = {
        "bool": field_proto.TYPE_BOOL,
        "int": field_proto.TYPE_INT64,
        "float": field_proto.TYPE_DOUBLE,
        "str": field_proto.TYPE_STRING,
        "bytes": field_proto.TYPE_BYTES,
        "time_ns": field_proto.TYPE_INT64,
        "time_us": field_proto.TYPE_INT64,
        "list_str": field_proto.TYPE_STRING,
        "list_int": field_proto.TYPE_INT64,
    }
    digest = hashlib.sha1(repr(schema).encode()).hexdigest()[:12]
    file = descriptor_pb2.FileDescriptorProto(
        name=f"stratabench/{schema.name}_{digest}.proto", package=PACKAGE, syntax="proto3"
    )
    record = file.message_type.add(name="Record")
    for number, field in enumerate(schema.fields, start=1):
        repeated = field.type in ("list_str", "list_int")
        record.field.add(
            name=field.name,
            number=number,
            type=scalar[field.type],
            label=field_proto.LABEL_REPEATED if repeated else field_proto.LABEL_OPTIONAL,
        )
    wrapper = file.message_type.add(name="RecordList")
    wrapper.field.add(
        name="records",
        number=1,
        type=field_proto.TYPE_MESSAGE,
        type_name=f".{PACKAGE}.Record",
        label=field_proto.LABEL_REPEATED,
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    record_class = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PACKAGE}.Record"))
    list_class = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PACKAGE}.RecordList"))
    return record_class, list_class


@CODECS.register("protobuf", requires=("google.protobuf",), extra="codecs")
class ProtobufCodec(Codec):
    """protobuf (upb): messages built from the schema at run time, no protoc."""

    modes = ("typed",)
    lazy_modes = ("typed",)
    unsupported_types = {"any": "protobuf needs a declared type for every value"}

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        record_class, list_class = message_classes(schema)
        namespace = {"_us": us_from_datetime, "_datetime": datetime_from_us}
        # Keyword arguments: a message constructor takes no positional ones.
        to_messages = row_converter(
            schema,
            write="dict",
            convert={"time_us": "_us({})"},
            namespace=namespace,
        )
        to_rows_of = row_converter(
            schema,
            read="attr",
            convert={"list_str": "list({})", "list_int": "list({})", "time_us": "_datetime({})"},
            namespace=namespace,
        )

        def encode(rows: Sequence[Row]) -> bytes:
            message = list_class(records=[record_class(**fields) for fields in to_messages(rows)])
            encoded: bytes = message.SerializeToString()
            return encoded

        def to_rows(decoded: Any) -> list[Row]:
            return to_rows_of(decoded.records)

        first = operator.attrgetter(schema.fields[0].name)

        def access(decoded: Any) -> object:
            return [first(record) for record in decoded.records]

        return FunctionFormat(self.name, schema, mode, encode=encode, decode=list_class.FromString, to_rows=to_rows,
                              access=access)
