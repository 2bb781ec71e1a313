"""Tests of the marshal codec (stratabench.layers.codecs.marshal)."""

from __future__ import annotations

from datetime import datetime, timezone

from stratabench.datasets.schema import Field, Schema
from stratabench.layers.codecs import make_format


def test_microsecond_times_travel_as_integers() -> None:
    schema = Schema("t", (Field("at", "time_us"), Field("tags", "list_str")))
    at = datetime(1999, 12, 31, 23, 59, 59, 999_999, tzinfo=timezone.utc)
    fmt = make_format("marshal", schema, "typed")
    decoded = fmt.decode(fmt.encode([(at, ["x"])]))
    assert decoded == [(946_684_799_999_999, ["x"])]
    assert fmt.to_rows(decoded) == [(at, ["x"])]
