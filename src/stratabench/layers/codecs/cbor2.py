"""The ``cbor2`` codec: the cbor2 library (C extension), RFC 8949 CBOR.

Needs ``cbor2`` (extra ``codecs``). Modes:

- ``typed``: each record is a CBOR array in field order, time as an integer
  count of nanoseconds; decoding with ``immutable=True`` makes every array a
  tuple inside the decoder, so ``loads`` hands back a tuple of row tuples.
  Lists (and arrays and maps inside ``any`` values) come back as tuples and
  frozendicts, which ``to_rows`` turns back into lists and dicts.
- ``raw``: each record is a map keyed by field name (lists and dicts).

``time_us`` travels as CBOR's date/time string (tag 0), which cbor2 writes
with microseconds and reads back into an aware UTC ``datetime``, exactly.
Nanosecond time never uses a tag: the epoch tag (1) holds a float and loses
nanoseconds, and the string tag goes through ``datetime``.

What it cannot do: carry nanoseconds in a CBOR time tag (see above).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from stratabench.datasets.schema import Row, Schema
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format, FunctionFormat, row_converter, thawed_rows

__all__ = ["Cbor2Codec"]


@CODECS.register("cbor2", requires=("cbor2",), extra="codecs")
class Cbor2Codec(Codec):
    """cbor2: standard binary CBOR; typed rows decode straight into tuples."""

    modes = ("typed", "raw")

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        import cbor2

        decode: Callable[[bytes], object]
        if mode == "typed":
            to_wire = row_converter(schema)
            to_rows = thawed_rows(schema)

            def decode(data: bytes) -> object:
                return cbor2.loads(data, immutable=True)

        else:
            to_wire = row_converter(schema, write="dict")
            to_rows = row_converter(schema, read="key")
            decode = cbor2.loads

        def encode(rows: Sequence[Row]) -> bytes:
            encoded: bytes = cbor2.dumps(to_wire(rows))
            return encoded

        return FunctionFormat(self.name, schema, mode, encode=encode, decode=decode, to_rows=to_rows)
