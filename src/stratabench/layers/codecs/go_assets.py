"""Read the bulkload assets the Go adapter writes, for cross-language checks.

Python must read the files Go wrote, and the records must hash to the
dataset hash (docs/studies/bulkload.md sections 3 and 4.1). Each Go format Python
can read is a mode of a codec (:data:`GO_ASSET_CODECS`); suites make cells
of those, and :func:`decode_go_asset` is the one-call form for checks:

- ``json`` (``encoding/json``): the ``json`` codec's raw mode, since the
  file is the canonical form itself;
- ``msgpack`` (vmihailenco/msgpack v4): the ``msgpack`` codec's
  ``go-msgpack`` mode (Go field-name keys, timestamp extension -1);
- ``msgp`` (tinylib/msgp): the ``msgpack`` codec's ``go-msgp`` mode
  (lowercase keys, extension 5 with a 12-byte payload);
- ``cbor`` (fxamacker/cbor), ``bson`` (the MongoDB driver), ``avro``
  (hamba/avro), ``protobuf`` (protowire), ``flatbuffers`` (Google's
  runtime) and ``arrow`` (apache/arrow-go, an IPC stream): the ``cbor2``,
  ``bson``, ``fastavro``, ``protobuf``, ``flatbuffers`` and ``arrow``
  codecs, whose wire the Go formats write (nanosecond time);
- the Go formats in :data:`SAME_WIRE` write another one's wire.

What it cannot do: read ``gob`` (Go's self-describing stream, with time in
its binary marshaller's form), ``xml`` or ``embed`` (Go source).
"""

from __future__ import annotations

from stratabench.datasets.bulkload import BULKLOAD_SCHEMA
from stratabench.datasets.schema import Row
from stratabench.errors import UsageError
from stratabench.layers.codecs import make_format

__all__ = ["GO_ASSET_CODECS", "SAME_WIRE", "decode_go_asset"]

GO_ASSET_CODECS: dict[str, tuple[str, str]] = {
    "json": ("json", "raw"),
    "msgpack": ("msgpack", "go-msgpack"),
    "msgp": ("msgpack", "go-msgp"),
    "cbor": ("cbor2", "typed"),
    "bson": ("bson", "raw"),
    "avro": ("fastavro", "raw"),
    "protobuf": ("protobuf", "typed"),
    "flatbuffers": ("flatbuffers", "table"),
    "arrow": ("arrow", "table"),
}

SAME_WIRE: dict[str, str] = {
    "msgpack5": "msgpack",
    "go-json": "json",
    "jsoniter": "json",
    "sonic": "json",
    "segmentio-json": "json",
}
"""Go formats whose files are another's wire (another library for it): the cross-language test reads
them too; the suite's cross-language rows read one file per wire."""
"""Go asset format -> the (codec, mode) that reads it."""


def decode_go_asset(fmt: str, data: bytes) -> list[Row]:
    """Decode a bulkload asset written by the Go adapter into canonical rows.

    Parameters
    ----------
    fmt
        A key of :data:`GO_ASSET_CODECS`.
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
        If ``fmt`` is not one Python reads.
    DataError
        If ``data`` is not a readable asset of that format.
    UnavailableError
        If the codec's package is missing.
    """
    wire = SAME_WIRE.get(fmt, fmt)
    if wire not in GO_ASSET_CODECS:
        raise UsageError(f"cannot read Go's {fmt!r} asset in Python; readable: "
                         f"{', '.join([*GO_ASSET_CODECS, *SAME_WIRE])}")
    codec, mode = GO_ASSET_CODECS[wire]
    reader = make_format(codec, BULKLOAD_SCHEMA, mode)
    return reader.to_rows(reader.decode(data))
