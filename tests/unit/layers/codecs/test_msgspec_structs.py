"""Tests of msgspec Structs from a schema and the msgspec formats (stratabench.layers.codecs.msgspec_structs)."""

from __future__ import annotations

from datetime import datetime

import msgspec
import pytest

from stratabench.datasets.bulkload import canonical_hash, first_difference, generate, BULKLOAD_SCHEMA
from stratabench.datasets.verify import verify_rows
from stratabench.layers.codecs import make_format
from stratabench.layers.codecs.msgspec_structs import struct_type

ROWS = generate(20, 100)


def test_structs_are_array_like_untracked_and_typed() -> None:
    struct = struct_type(BULKLOAD_SCHEMA)
    config = struct.__struct_config__  # type: ignore[attr-defined]
    assert config.array_like and not config.gc
    assert struct.__struct_fields__ == BULKLOAD_SCHEMA.names  # type: ignore[attr-defined]
    assert msgspec.json.encode(struct(True, 1, 0.5, "A", 7)) == b'[true,1,0.5,"A",7]'
    assert struct_type(BULKLOAD_SCHEMA, time_ns="datetime").__annotations__["time"] is datetime


@pytest.mark.parametrize("codec", ["msgspec.json", "msgspec.msgpack"])
def test_typed_decodes_into_structs_with_integer_time(codec: str) -> None:
    fmt = make_format(codec, BULKLOAD_SCHEMA, "typed")
    decoded = fmt.decode(fmt.encode(ROWS))
    assert isinstance(decoded, list) and type(decoded[0]).__name__ == "BulkloadStruct"
    assert decoded[0].time == ROWS[0].time_ns
    assert fmt.to_rows(decoded) == ROWS


@pytest.mark.parametrize("codec", ["msgspec.json", "msgspec.msgpack"])
def test_the_datetime_mode_loses_nanoseconds_and_fails_integrity(codec: str) -> None:
    fmt = make_format(codec, BULKLOAD_SCHEMA, "datetime")
    assert not fmt.exact
    decoded = fmt.decode(fmt.encode(ROWS))
    assert isinstance(decoded[0].time, datetime)  # type: ignore[index]
    integrity = verify_rows(
        fmt.to_rows(decoded),
        expected_hash=canonical_hash(ROWS),
        hash_rows=canonical_hash,
        expected_rows=lambda: ROWS,
        difference=first_difference,
    )
    assert not integrity.ok
    assert integrity.detail is not None and integrity.detail.startswith("record 0 field 'time'")


def test_the_datetime_mode_is_exact_without_nanosecond_fields() -> None:
    from stratabench.datasets.schema import Field, Schema

    schema = Schema("t", (Field("at", "time_us"),))
    assert make_format("msgspec.msgpack", schema, "datetime").exact
