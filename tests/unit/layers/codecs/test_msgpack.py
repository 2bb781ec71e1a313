"""Tests of the msgpack codec's two wires (stratabench.layers.codecs.msgpack)."""

from __future__ import annotations

import msgpack

from stratabench.datasets.bulkload import generate
from stratabench.layers.codecs.base import BULKLOAD_SCHEMA, make_format

ROWS = generate(3, 100)


def test_typed_unpacks_straight_into_row_tuples() -> None:
    fmt = make_format("msgpack", BULKLOAD_SCHEMA, "typed")
    data = fmt.encode(ROWS)
    assert msgpack.unpackb(data) == [list(row) for row in ROWS]  # arrays, integer nanoseconds
    decoded = fmt.decode(data)
    assert decoded == tuple(tuple(row) for row in ROWS)


def test_raw_uses_maps_and_the_timestamp_extension() -> None:
    fmt = make_format("msgpack", BULKLOAD_SCHEMA, "raw")
    decoded = fmt.decode(fmt.encode(ROWS))
    assert isinstance(decoded, list)
    first = decoded[0]
    assert list(first) == ["bool", "int", "float", "string", "time"]
    assert isinstance(first["time"], msgpack.Timestamp)
    assert first["time"].to_unix_nano() == ROWS[0].time_ns
    assert fmt.to_rows(decoded) == ROWS
