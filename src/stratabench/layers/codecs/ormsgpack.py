"""The ``ormsgpack`` codec: MessagePack with ormsgpack (Rust, orjson's sibling).

Needs ``ormsgpack`` (extra ``codecs``). Modes:

- ``typed``: each record a MessagePack array in field order, time as an
  integer count of nanoseconds (the ``msgpack`` codec's typed wire);
  ``unpackb`` gives lists, ``to_rows`` makes them tuples;
- ``raw``: each record a map keyed by field name.

``time_us`` travels as an integer count of microseconds in both modes:
ormsgpack writes a ``datetime`` as an RFC 3339 string, not as the timestamp
extension, and reads it back as that string.

What it cannot do: integers outside [-2**63, 2**64); a ``datetime``
through its own serializer without becoming a string.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stratabench.datasets.schema import Row, Schema, datetime_from_us, us_from_datetime
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format, FunctionFormat, row_converter

__all__ = ["OrmsgpackCodec"]


@CODECS.register("ormsgpack", requires=("ormsgpack",), extra="codecs")
class OrmsgpackCodec(Codec):
    """ormsgpack: MessagePack in Rust, the msgpack sibling of orjson."""

    modes = ("typed", "raw")

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        import ormsgpack

        namespace = {"_us": us_from_datetime, "_datetime": datetime_from_us}
        to_wire = row_converter(schema, write="tuple" if mode == "typed" else "dict",
                                convert={"time_us": "_us({})"}, namespace=namespace)
        to_rows = row_converter(schema, read="index" if mode == "typed" else "key",
                                convert={"time_us": "_datetime({})"}, namespace=namespace)

        def encode(rows: Sequence[Row]) -> bytes:
            packed: bytes = ormsgpack.packb(to_wire(rows))
            return packed

        return FunctionFormat(self.name, schema, mode, encode=encode, decode=ormsgpack.unpackb, to_rows=to_rows)
