"""The ``fastavro`` codec: Apache Avro's binary encoding with fastavro (Cython).

Needs ``fastavro`` (extra ``codecs``). The asset is schemaless Avro (no
container file header): one value of the schema ``{"type": "array",
"items": Record}``, where ``Record`` has one field per schema field, named
as the field, in order. The Go ``avro`` format writes the same, so each
reads the other's bytes. One mode, ``raw``: ``decode`` returns the dicts
fastavro builds.

Field types: ``boolean``, ``long``, ``double``, ``string``, ``bytes``;
``time_ns`` a ``long`` count of nanoseconds (exact; Avro's
``timestamp-nanos`` logical type would make fastavro build a ``datetime``,
which stops at microseconds); ``time_us`` ``timestamp-micros``, read back
as an aware UTC ``datetime``; lists are Avro arrays.

Avro bytes do not say where a value ends, so ``decode`` refuses input with
bytes left over after the array: a corrupt start can otherwise read as a
shorter, wrong list.

What it cannot do: ``any`` fields (Avro needs a declared type for every
value).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stratabench.datasets.schema import Row, Schema
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format, FunctionFormat, row_converter

__all__ = ["FastavroCodec", "avro_schema"]

_TYPES: dict[str, Any] = {
    "bool": "boolean",
    "int": "long",
    "float": "double",
    "str": "string",
    "bytes": "bytes",
    "time_ns": "long",
    "time_us": {"type": "long", "logicalType": "timestamp-micros"},
    "list_str": {"type": "array", "items": "string"},
    "list_int": {"type": "array", "items": "long"},
}


def avro_schema(schema: Schema) -> dict[str, Any]:
    """The Avro schema of a list of ``schema``'s records (as JSON-ready data)."""
    fields = [{"name": field.name, "type": _TYPES[field.type]} for field in schema.fields]
    return {"type": "array", "items": {"type": "record", "name": "Record", "fields": fields}}


@CODECS.register("fastavro", requires=("fastavro",), extra="codecs")
class FastavroCodec(Codec):
    """fastavro: Avro's compact binary, schema-driven, in Cython."""

    modes = ("raw",)
    unsupported_types = {"any": "Avro needs a declared type for every value"}

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        import fastavro

        parsed = fastavro.parse_schema(avro_schema(schema))
        to_wire = row_converter(schema, write="dict")
        to_rows = row_converter(schema, read="key")
        writer, reader = fastavro.schemaless_writer, fastavro.schemaless_reader

        def encode(rows: Sequence[Row]) -> bytes:
            buffer = io.BytesIO()
            writer(buffer, parsed, to_wire(rows))
            return buffer.getvalue()

        def decode(data: bytes) -> object:
            buffer = io.BytesIO(data)
            records = reader(buffer, parsed, None)
            if buffer.tell() != len(data):
                raise ValueError(f"{len(data) - buffer.tell():,} bytes left after the records")
            return records

        return FunctionFormat(self.name, schema, mode, encode=encode, decode=decode, to_rows=to_rows)
