"""The ``bson`` codec: BSON with pymongo's ``bson`` package (C extension), MongoDB's format.

Needs ``pymongo`` (extra ``codecs``), whose ``bson`` package this is. One
mode, ``raw``: a BSON document is a map, so the asset is one document,
``{"records": [...]}``, each record a sub-document keyed by field name, and
``decode`` returns the dicts ``bson.decode`` builds.

Field types: ``time_ns`` is an int64 count of nanoseconds and ``time_us``
one of microseconds, because BSON's own datetime holds milliseconds (the Go
``bson`` format writes the same int64, so each reads the other's file);
``bytes`` is binary subtype 0; ``any`` values are BSON's own documents,
arrays and scalars. Python ints are written as int32 where they fit and
int64 otherwise; ``to_rows`` turns the ``Int64`` objects read back into
plain ints.

What it cannot do: carry a time in BSON's datetime without losing below
the millisecond; integers outside the signed 64-bit range; map keys other
than strings (or with NUL) inside ``any`` values.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stratabench.datasets.schema import Row, Schema, datetime_from_us, us_from_datetime
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format, FunctionFormat, row_converter

__all__ = ["BsonCodec", "RECORDS_KEY"]

RECORDS_KEY = "records"
"""The key of the asset document's one array."""


def _plain(value: Any) -> Any:
    """A decoded BSON value with ``Int64`` made ``int``, inside lists and documents too."""
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


@CODECS.register("bson", requires=("bson",), extra="codecs")
class BsonCodec(Codec):
    """pymongo's bson: MongoDB's binary documents, in C."""

    modes = ("raw",)

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        import bson

        namespace = {"_us": us_from_datetime, "_datetime": datetime_from_us, "_int": int, "_plain": _plain}
        to_wire = row_converter(schema, write="dict", convert={"time_us": "_us({})"}, namespace=namespace)
        to_rows_of = row_converter(schema, read="key", namespace=namespace, convert={
            "int": "_int({})", "time_ns": "_int({})", "time_us": "_datetime({})", "list_int": "_plain({})",
            "any": "_plain({})"})

        def encode(rows: Sequence[Row]) -> bytes:
            return bson.encode({RECORDS_KEY: to_wire(rows)})

        def decode(data: bytes) -> object:
            return bson.decode(data)[RECORDS_KEY]

        return FunctionFormat(self.name, schema, mode, encode=encode, decode=decode, to_rows=to_rows_of)
