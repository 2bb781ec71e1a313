"""Read the bulkload assets the Go adapter writes, for cross-language checks.

Python must read the files Go wrote, and the records must hash to the
dataset hash (specs/bulkload.md sections 3 and 4.1). This module turns each
Go format it can read into canonical rows of
:data:`~stratabench.layers.codecs.base.BULKLOAD_SCHEMA`:

- ``json`` (``encoding/json``): the JSON codecs' wire, read with the
  standard library; the file is the canonical form itself;
- ``msgpack`` (vmihailenco/msgpack v4): maps keyed by the Go field names
  (``Bool``, ``Int``, ``Float``, ``String``, ``Time``), time as the
  standard timestamp extension (type -1), unpacked straight to integer
  nanoseconds; needs ``msgpack``;
- ``msgp`` (tinylib/msgp): maps with the lowercase keys, time as extension
  type 5 with a 12-byte payload (big-endian int64 seconds, int32
  nanoseconds); needs ``msgpack``.

What it cannot do: read ``gob`` (Go's self-describing stream, with time in
its binary marshaller's form) or ``embed`` (Go source).
"""

from __future__ import annotations

import json
import struct
from typing import Any

from stratabench.errors import DataError, UsageError
from stratabench.layers.codecs.base import BULKLOAD_SCHEMA, Row, row_converter
from stratabench.layers.codecs.json_wire import json_to_rows

__all__ = ["GO_ASSET_FORMATS", "decode_go_asset"]

GO_ASSET_FORMATS = ("json", "msgpack", "msgp")
"""The Go adapter's formats that :func:`decode_go_asset` reads."""

_GO_FIELD_NAMES = ("Bool", "Int", "Float", "String", "Time")
_MSGP_TIME = 5
_MSGP_TIME_PAYLOAD = struct.Struct(">qi")


def _msgp_ext(code: int, payload: bytes) -> Any:
    import msgpack

    if code != _MSGP_TIME:
        return msgpack.ExtType(code, payload)
    seconds, nanos = _MSGP_TIME_PAYLOAD.unpack(payload)
    return seconds * 1_000_000_000 + nanos


def decode_go_asset(fmt: str, data: bytes) -> list[Row]:
    """Decode a bulkload asset written by the Go adapter into canonical rows.

    Parameters
    ----------
    fmt
        One of :data:`GO_ASSET_FORMATS`.
    data
        The file's bytes.

    Returns
    -------
    list of rows
        ``(bool, int, float, string, time_ns)`` tuples, ready for the
        dataset's canonical hash.

    Raises
    ------
    UsageError
        If ``fmt`` is not one this module reads.
    DataError
        If ``data`` is not a readable asset of that format.
    """
    if fmt not in GO_ASSET_FORMATS:
        raise UsageError(f"cannot read Go's {fmt!r} asset in Python; readable: {', '.join(GO_ASSET_FORMATS)}")
    try:
        if fmt == "json":
            return json_to_rows(BULKLOAD_SCHEMA)(json.loads(data))
        import msgpack

        if fmt == "msgpack":
            records = msgpack.unpackb(data, timestamp=2)
            return row_converter(BULKLOAD_SCHEMA, read="key", keys=_GO_FIELD_NAMES)(records)
        records = msgpack.unpackb(data, ext_hook=_msgp_ext)
        return row_converter(BULKLOAD_SCHEMA, read="key")(records)
    except Exception as error:
        raise DataError(f"Go {fmt} asset of {len(data):,} bytes cannot be read: {type(error).__name__}: {error!s:.160}") from error
