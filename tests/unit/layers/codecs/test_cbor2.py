"""Tests of the cbor2 codec (stratabench.layers.codecs.cbor2)."""

from __future__ import annotations

from datetime import datetime, timezone

import cbor2

from stratabench.datasets.bulkload import generate, BULKLOAD_SCHEMA
from stratabench.datasets.schema import Field, Schema
from stratabench.layers.codecs import make_format

ROWS = generate(3, 100)


def test_typed_decodes_into_row_tuples_with_integer_time() -> None:
    fmt = make_format("cbor2", BULKLOAD_SCHEMA, "typed")
    data = fmt.encode(ROWS)
    assert cbor2.loads(data) == [list(row) for row in ROWS]
    assert fmt.decode(data) == tuple(tuple(row) for row in ROWS)


def test_microsecond_times_use_the_string_tag_not_the_lossy_epoch_tag() -> None:
    schema = Schema("t", (Field("at", "time_us"),))
    at = datetime(2020, 1, 2, 3, 4, 5, 678_901, tzinfo=timezone.utc)
    data = make_format("cbor2", schema, "raw").encode([(at,)])
    assert b"\xc0" in data and b"\xc1" not in data
    assert make_format("cbor2", schema, "raw").decode(data) == [{"at": at}]
