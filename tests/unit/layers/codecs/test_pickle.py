"""Tests of the pickle codec (stratabench.layers.codecs.pickle)."""

from __future__ import annotations

import pickle

from stratabench.datasets.bulkload import BulkRecord, generate, BULKLOAD_SCHEMA
from stratabench.layers.codecs import make_format
from stratabench.layers.codecs.pickle import PROTOCOL


def test_typed_pickles_plain_tuples_at_protocol_5() -> None:
    rows = generate(3, 100)
    data = make_format("pickle", BULKLOAD_SCHEMA, "typed").encode(rows)
    assert PROTOCOL == 5 and data[:2] == b"\x80\x05"
    assert b"BulkRecord" not in data  # the caller's row class is not pickled by reference
    loaded = pickle.loads(data)
    assert type(loaded[0]) is tuple and not isinstance(loaded[0], BulkRecord)


def test_raw_pickles_dicts() -> None:
    rows = generate(2, 100)
    fmt = make_format("pickle", BULKLOAD_SCHEMA, "raw")
    decoded = fmt.decode(fmt.encode(rows))
    assert isinstance(decoded, list) and decoded[0]["time"] == rows[0].time_ns
