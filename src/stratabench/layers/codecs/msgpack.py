"""The ``msgpack`` codec: msgpack-python (C extension), and Go's two MessagePack wires.

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
  unpacked into :class:`msgpack.Timestamp` objects: the library's natural
  objects.
- ``go-msgpack``: the wire of the Go adapter's ``msgpack`` asset
  (vmihailenco/msgpack v4): maps keyed by the Go field names (the field name
  with its first letter upper-cased: ``Bool``, ``Int``, ...), times as the
  timestamp extension, unpacked in C straight to integer nanoseconds
  (``timestamp=2``).
- ``go-msgp``: the wire of the Go adapter's ``msgp`` asset (tinylib/msgp):
  maps keyed by field name, times as extension type 5 with a 12-byte payload
  (big-endian int64 seconds, then int32 nanoseconds), unpacked to integer
  nanoseconds by an extension hook (one Python call per time value).

In the two Go modes ``decode`` returns the dicts ``unpackb`` builds, with
integer-nanosecond times. Every mode is exact. What Python writes in a Go
mode differs from Go's bytes only in how integers are tagged (Go tags every
``int64`` as such; msgpack-python picks the smallest tag), which every
reader accepts.

What it cannot do: integers outside [-2**63, 2**64); map keys other than
strings inside ``any`` values.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from stratabench.datasets.schema import Row, Schema, datetime_from_us, us_from_datetime
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format, FunctionFormat, row_converter, thawed_rows

__all__ = ["MSGP_TIME_EXT", "MsgpackCodec"]

MSGP_TIME_EXT = 5
"""The extension type tinylib/msgp writes ``time.Time`` as."""

_MSGP_TIME = struct.Struct(">qi")
_NS = 1_000_000_000


def _msgp_time(ns: int) -> Any:
    import msgpack

    return msgpack.ExtType(MSGP_TIME_EXT, _MSGP_TIME.pack(*divmod(ns, _NS)))


def _msgp_ext(code: int, payload: bytes) -> Any:
    if code != MSGP_TIME_EXT:
        import msgpack

        return msgpack.ExtType(code, payload)
    seconds, nanos = _MSGP_TIME.unpack(payload)
    return seconds * _NS + nanos


@CODECS.register("msgpack", requires=("msgpack",), extra="codecs")
class MsgpackCodec(Codec):
    """msgpack-python: compact binary; typed rows unpack straight into tuples."""

    modes = ("typed", "raw", "go-msgpack", "go-msgp")

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        import msgpack

        namespace = {
            "_ts": msgpack.Timestamp.from_unix_nano,
            "_msgp_time": _msgp_time,
            "_us": us_from_datetime,
            "_datetime": datetime_from_us,
        }
        decode: Callable[[bytes], object]
        if mode == "typed":
            to_wire = row_converter(schema)
            to_rows = thawed_rows(schema)

            def decode(data: bytes) -> object:
                return msgpack.unpackb(data, use_list=False, timestamp=3)

        elif mode == "raw":
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
        else:
            msgp = mode == "go-msgp"
            keys = schema.names if msgp else tuple(name[0].upper() + name[1:] for name in schema.names)
            times = {"time_ns": "_msgp_time({})", "time_us": "_msgp_time(_us({}) * 1000)"} if msgp else {"time_ns": "_ts({})"}
            to_wire = row_converter(schema, write="dict", keys=keys, convert=times, namespace=namespace)
            to_rows = row_converter(
                schema, read="key", keys=keys, convert={"time_us": "_datetime({} // 1000)"}, namespace=namespace
            )
            if msgp:

                def decode(data: bytes) -> object:
                    return msgpack.unpackb(data, ext_hook=_msgp_ext)

            else:

                def decode(data: bytes) -> object:
                    return msgpack.unpackb(data, timestamp=2)

        def encode(rows: Sequence[Row]) -> bytes:
            packed: bytes = msgpack.packb(to_wire(rows), use_bin_type=True, datetime=True)
            return packed

        return FunctionFormat(self.name, schema, mode, encode=encode, decode=decode, to_rows=to_rows)
