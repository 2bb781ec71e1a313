"""The ``msgpack`` codec: msgpack-python (C extension).

Needs ``msgpack`` (extra ``codecs``). Modes:

- ``typed``: each record is a MessagePack array in field order, time as an
  integer count of nanoseconds; decoding with ``use_list=False`` makes every
  array a tuple inside the C unpacker, so ``unpackb`` hands back a tuple of
  row tuples with no Python code per record. ``time_us`` travels as the
  timestamp extension (type -1) and is unpacked straight into an aware UTC
  ``datetime``; lists (and arrays inside ``any`` values) come back as
  tuples, which ``to_rows`` turns back into lists.
- ``raw``: each record is a map keyed by field name, and both time types
  travel as the timestamp extension (type -1, which carries nanoseconds),
  unpacked into :class:`msgpack.Timestamp` objects: the natural objects of
  the library, and the wire Go's vmihailenco/msgpack writes for ``time.Time``.

Both modes are exact. Reading the Go adapter's msgpack and msgp assets is
:func:`stratabench.layers.codecs.go_assets.decode_go_asset`'s job.

What it cannot do: integers outside [-2**63, 2**64); map keys other than
strings inside ``any`` values.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import (
    Codec,
    Format,
    FunctionFormat,
    Row,
    Schema,
    datetime_from_us,
    row_converter,
    thawed_rows,
)

__all__ = ["MsgpackCodec"]


@CODECS.register("msgpack", requires=("msgpack",), extra="codecs")
class MsgpackCodec(Codec):
    """msgpack-python: compact binary; typed rows unpack straight into tuples."""

    modes = ("typed", "raw")

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        import msgpack

        if mode == "typed":
            to_wire = row_converter(schema)
            to_rows = thawed_rows(schema)

            def decode(data: bytes) -> object:
                return msgpack.unpackb(data, use_list=False, timestamp=3)

        else:
            namespace = {"_ts": msgpack.Timestamp.from_unix_nano, "_datetime": datetime_from_us}
            # An aware datetime (time_us) is packed as the same extension
            # by packb(datetime=True).
            to_wire = row_converter(schema, write="dict", convert={"time_ns": "_ts({})"}, namespace=namespace)
            to_rows = row_converter(
                schema,
                read="key",
                convert={"time_ns": "{}.to_unix_nano()", "time_us": "_datetime({}.to_unix_nano() // 1000)"},
                namespace=namespace,
            )
            decode = msgpack.unpackb

        def encode(rows: Sequence[Row]) -> bytes:
            packed: bytes = msgpack.packb(to_wire(rows), use_bin_type=True, datetime=True)
            return packed

        return FunctionFormat(self.name, schema, mode, encode=encode, decode=decode, to_rows=to_rows)
