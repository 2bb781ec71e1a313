"""Tests of the JSON codecs' shared wire (stratabench.layers.codecs.json_wire)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from stratabench.datasets.bulkload import REFERENCE_HASHES, canonical_bytes, canonical_hash, generate, BULKLOAD_SCHEMA
from stratabench.datasets.schema import Field, Schema
from stratabench.layers.codecs import make_format
from stratabench.layers.codecs.json_wire import json_rows, json_to_rows

GO_JSON = Path(__file__).parents[3] / "golden" / "go_assets" / "bulkload-10-100.json"
READERS = [("json", "typed"), ("json", "raw"), ("orjson", "typed"), ("orjson", "raw"), ("msgspec.json", "raw")]


@pytest.mark.parametrize(("codec", "mode"), READERS)
def test_reads_the_file_go_wrote(codec: str, mode: str) -> None:
    fmt = make_format(codec, BULKLOAD_SCHEMA, mode)
    rows = fmt.to_rows(fmt.decode(GO_JSON.read_bytes()))
    assert canonical_hash(rows) == REFERENCE_HASHES[(10, 100)]


@pytest.mark.parametrize(("codec", "mode"), READERS)
def test_reads_the_canonical_form_of_1000_records(codec: str, mode: str) -> None:
    # Go's json asset is the canonical form: floats in [1e-6, 1e-4) are
    # written positionally, whole floats without a point.
    data = canonical_bytes(generate(1000, 100))
    fmt = make_format(codec, BULKLOAD_SCHEMA, mode)
    assert canonical_hash(fmt.to_rows(fmt.decode(data))) == REFERENCE_HASHES[(1000, 100)]


def test_raw_mode_keeps_the_strings() -> None:
    decoded = make_format("json", BULKLOAD_SCHEMA, "raw").decode(GO_JSON.read_bytes())
    assert isinstance(decoded, list)
    assert decoded[0]["time"] == "2000-08-02T03:28:02.028350735Z"


def test_whole_floats_written_by_go_come_back_as_floats() -> None:
    data = b'[{"bool":false,"int":1,"float":1,"string":"","time":"1970-01-01T00:00:00Z"},' \
        b'{"bool":true,"int":-1,"float":-0,"string":"","time":"1970-01-01T00:00:00.1Z"}]'
    rows = json_to_rows(BULKLOAD_SCHEMA)(json.loads(data))
    assert rows == [(False, 1, 1.0, "", 0), (True, -1, 0.0, "", 100_000_000)]
    assert isinstance(rows[0][2], float)
    # The documented loss: Go spells -0.0 as -0, which parsers read as 0.
    assert str(rows[1][2]) == "0.0"


def test_bytes_and_microsecond_times_are_spelled_as_go_does() -> None:
    schema = Schema("s", (Field("blob", "bytes"), Field("at", "time_us")))
    at = datetime(2001, 2, 3, 4, 5, 6, 7000, tzinfo=timezone.utc)
    assert json_rows(schema)([(b"\x00\xffhi", at)]) == [{"blob": "AP9oaQ==", "at": "2001-02-03T04:05:06.007Z"}]


@pytest.mark.parametrize("codec", ["json", "orjson"])
def test_non_finite_floats_are_refused(codec: str) -> None:
    from stratabench.errors import DataError

    fmt = make_format(codec, BULKLOAD_SCHEMA)
    with pytest.raises(DataError, match=f"^{codec}/typed: cannot encode 1 bulkload rows"):
        fmt.encode([(True, 1, float("nan"), "", 0)])
