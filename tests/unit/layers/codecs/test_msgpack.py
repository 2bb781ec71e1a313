"""Tests of the msgpack codec's two wires (stratabench.layers.codecs.msgpack)."""

from __future__ import annotations

from pathlib import Path

import msgpack
import pytest

from stratabench.datasets.bulkload import generate, BULKLOAD_SCHEMA
from stratabench.layers.codecs import make_format

ROWS = generate(3, 100)
GOLDEN = Path(__file__).parents[3] / "golden" / "go_assets"


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


@pytest.mark.parametrize(("mode", "asset"), [("go-msgpack", "msgpack"), ("go-msgp", "msgp")])
def test_go_modes_write_what_go_writes_up_to_integer_tags(mode: str, asset: str) -> None:
    go = (GOLDEN / f"bulkload-10-100.{asset}").read_bytes()
    fmt = make_format("msgpack", BULKLOAD_SCHEMA, mode)
    ours = fmt.encode(generate(10, 100))
    # Go tags int64 as such (0xd3), msgpack-python a positive one as uint64
    # (0xcf): same length, same values.
    assert len(ours) == len(go) and ours != go
    assert fmt.decode(ours) == fmt.decode(go)
    assert fmt.to_rows(fmt.decode(go)) == generate(10, 100)


def test_go_modes_decode_times_to_integer_nanoseconds() -> None:
    for mode, key in (("go-msgpack", "Time"), ("go-msgp", "time")):
        fmt = make_format("msgpack", BULKLOAD_SCHEMA, mode)
        decoded = fmt.decode(fmt.encode(ROWS))
        assert isinstance(decoded, list) and decoded[0][key] == ROWS[0].time_ns
