"""The ``capnp`` codec: Cap'n Proto with pycapnp (the C++ library), schema written at run time.

Needs ``pycapnp`` (extra ``codecs``); no ``capnp`` compiler step. The
schema is written from the :class:`~.base.Schema` into a temporary
``.capnp`` file and parsed by pycapnp's own schema parser, once per schema
and process: a ``Record`` struct with one field per schema field (ordinals
from 0, in order) and a ``RecordList`` with ``records :List(Record)``.

Field types: ``Bool``, ``Int64``, ``Float64``, ``Text``, ``Data``,
``List(Text)``, ``List(Int64)``; ``time_ns`` is an ``Int64`` count of
nanoseconds, ``time_us`` of microseconds.

One mode, ``reader``: ``decode`` wraps the bytes in a message reader
without copying or parsing them (Cap'n Proto's wire is its memory layout),
so the format is lazy (:attr:`.base.Format.lazy`): ``access`` reads the
first field of every record, ``to_rows`` every field. pycapnp hands readers
out through a context manager; ``decode`` enters it and keeps the reader,
which holds the bytes alive.

What it cannot do: ``any`` fields (a struct needs a declared type for
every value).
"""

from __future__ import annotations

import functools
import hashlib
import operator
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stratabench.datasets.schema import Row, Schema, datetime_from_us, us_from_datetime
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format, FunctionFormat, row_converter

__all__ = ["CapnpCodec", "capnp_schema_text"]

_TYPES = {
    "bool": "Bool",
    "int": "Int64",
    "float": "Float64",
    "str": "Text",
    "bytes": "Data",
    "time_ns": "Int64",
    "time_us": "Int64",
    "list_str": "List(Text)",
    "list_int": "List(Int64)",
}


def capnp_schema_text(schema: Schema) -> str:
    """The ``.capnp`` source of ``schema``'s records, with a file id derived from the schema."""
    # A Cap'n Proto file id is 64 bits with the top bit set.
    file_id = int(hashlib.sha1(repr(schema).encode()).hexdigest()[:16], 16) | (1 << 63)
    fields = "\n".join(f"  {field.name} @{number} :{_TYPES[field.type]};"
                       for number, field in enumerate(schema.fields))
    return f"@{file_id:#x};\nstruct Record {{\n{fields}\n}}\nstruct RecordList {{\n  records @0 :List(Record);\n}}\n"


@functools.cache
def _module(text: str) -> Any:
    """The parsed schema module of ``text`` (parsed once per process: a file id may be loaded once)."""
    import capnp

    with tempfile.TemporaryDirectory(prefix="stratabench-capnp-") as directory:
        path = Path(directory) / "records.capnp"
        path.write_text(text, encoding="utf-8")
        return capnp.load(str(path))


@CODECS.register("capnp", requires=("capnp",), extra="codecs")
class CapnpCodec(Codec):
    """Cap'n Proto (pycapnp): the wire is the memory layout, read in place."""

    modes = ("reader",)
    lazy_modes = ("reader",)
    unsupported_types = {"any": "a Cap'n Proto struct needs a declared type for every value"}

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        module = _module(capnp_schema_text(schema))
        record_list = module.RecordList
        names = schema.names
        namespace = {"_us": us_from_datetime, "_datetime": datetime_from_us}
        to_wire = row_converter(schema, convert={"time_us": "_us({})"}, namespace=namespace)
        to_rows_of = row_converter(schema, read="attr", namespace=namespace, convert={
            "list_str": "list({})", "list_int": "list({})", "bytes": "bytes({})", "time_us": "_datetime({})"})

        def encode(rows: Sequence[Row]) -> bytes:
            message = record_list.new_message()
            records = message.init("records", len(rows))
            for record, values in zip(records, to_wire(rows)):
                for name, value in zip(names, values):
                    setattr(record, name, value)
            data: bytes = message.to_bytes()
            return data

        def decode(data: bytes) -> object:
            return record_list.from_bytes(data).__enter__()

        def to_rows(decoded: Any) -> list[Row]:
            return to_rows_of(decoded.records)

        first = operator.attrgetter(schema.fields[0].name)

        def access(decoded: Any) -> object:
            return [first(record) for record in decoded.records]

        return FunctionFormat(self.name, schema, mode, encode=encode, decode=decode, to_rows=to_rows, access=access)
