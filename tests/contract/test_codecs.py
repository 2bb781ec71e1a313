"""The codec contract, run against every registered codec and each of its modes.

A codec is tested here the moment it is registered: its modes are read from
the class, so a mode a codec does not offer is simply not parametrized.
"""

from __future__ import annotations

from datetime import datetime, timezone
from functools import partial
from pathlib import Path

import pytest

from stratabench.datasets.bulkload import (
    canonical_hash,
    first_difference as bulkload_difference,
    generate,
    BULKLOAD_SCHEMA,
)
from stratabench.datasets.schema import Field, Row, Schema
from stratabench.datasets.verify import first_difference, verify_rows
from stratabench.errors import DataError, UnavailableError, UsageError
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs import make_format
from stratabench.layers.codecs.base import Codec, Format

CASES = [(info.name, mode) for info in CODECS for mode in info.cls.modes]


@pytest.fixture(params=CASES, ids=[f"{name}/{mode}" for name, mode in CASES])
def case(request: pytest.FixtureRequest) -> tuple[str, str]:
    name, mode = request.param
    return name, mode


def build(case: tuple[str, str], schema: Schema, workdir: Path) -> Format:
    name, mode = case
    return make_format(name, schema, mode, workdir=workdir)


def round_trip(fmt: Format, rows: list[Row]) -> list[Row]:
    return fmt.to_rows(fmt.decode(fmt.encode(rows)))


def test_every_codec_is_registered() -> None:
    expected = {"json", "orjson", "pickle", "marshal", "msgpack", "msgspec.json", "msgspec.msgpack", "cbor2", "protobuf",
                "ujson", "rapidjson", "simdjson", "bson", "fastavro", "arrow", "parquet", "ormsgpack", "capnp", "flatbuffers"}
    assert len(CODECS.names) >= 20
    assert expected | {"embed"} <= set(CODECS.names)


def test_format_names_itself(case: tuple[str, str], tmp_path: Path) -> None:
    fmt = build(case, BULKLOAD_SCHEMA, tmp_path)
    assert (fmt.codec, fmt.mode, fmt.schema) == (*case, BULKLOAD_SCHEMA)
    assert fmt.label == f"{case[0]}/{case[1]}"
    # Only a mode declared inexact may lose data, and on the bulkload
    # records (nanosecond times) it does.
    assert fmt.exact is (case[1] not in CODECS.get(case[0]).inexact_modes)
    # Suites plan a lazy format's access and read rows from the class, before building it.
    assert fmt.lazy is (case[1] in CODECS.get(case[0]).lazy_modes)


def test_access_reads_the_first_field_of_every_record(case: tuple[str, str], tmp_path: Path) -> None:
    rows = generate(50, 100)
    fmt = build(case, BULKLOAD_SCHEMA, tmp_path)
    values = fmt.access(fmt.decode(fmt.encode(rows)))
    assert list(values) == [row[0] for row in rows]  # type: ignore[call-overload]


def test_bulkload_round_trip_hashes_or_fails_integrity(case: tuple[str, str], tmp_path: Path) -> None:
    expected = generate(200, 100)
    fmt = build(case, BULKLOAD_SCHEMA, tmp_path)
    rows = round_trip(fmt, expected)
    integrity = verify_rows(
        rows,
        expected_hash=canonical_hash(expected),
        hash_rows=canonical_hash,
        expected_rows=lambda: expected,
        difference=bulkload_difference,
    )
    if fmt.exact:
        assert integrity.ok, integrity.detail
        assert integrity.actual == canonical_hash(generate(200, 100))
    else:
        # A lossy path runs, and is reported as wrong, never as fine.
        assert not integrity.ok
        assert integrity.detail is not None and "field 'time'" in integrity.detail


EDGE_SCHEMA = Schema(
    "edge",
    (Field("flag", "bool"), Field("number", "int"), Field("real", "float"), Field("text", "str"), Field("time", "time_ns")),
)
EDGE_ROWS: list[Row] = [
    (False, 0, 0.0, "", 0),
    (True, -1, -0.0, "héllo wörld ☃ 日本語 \U0001f600", 1),
    (False, 2**63 - 1, 1e-7, "<&> \"quoted\" \\ \n\t\x00 \u2028", 999_999_999),
    (True, -(2**63), 1e21, "x" * 1000, (2**31 - 1) * 10**9 + 999_999_999),
    (False, 1, 1.0, "Z", 1_000_000_000),
    (True, 123, -2.4122147266495095, "384203C438D4E94BF399CBD88BBCAF", 965_186_882_028_350_735),
    (False, -5, 2.5686020322490677e-05, "ÿ", -1_000_000_000),
    (True, 7, 5e-324, "a\u00e9", 100),
    (False, 8, 1.7976931348623157e308, "end", 1_500),
]


def test_edge_values_round_trip_exactly(case: tuple[str, str], tmp_path: Path) -> None:
    fmt = build(case, EDGE_SCHEMA, tmp_path)
    difference = first_difference(EDGE_SCHEMA, EDGE_ROWS, round_trip(fmt, EDGE_ROWS))
    if fmt.exact:
        assert difference is None, difference
    else:
        assert difference is not None and "field time" in difference


RICH_SCHEMA = Schema(
    "rich",
    (
        Field("key", "str"),
        Field("created", "time_us"),
        Field("tags", "list_str"),
        Field("scores", "list_int"),
        Field("blob", "bytes"),
        Field("approved", "bool"),
    ),
)
UTC = timezone.utc
RICH_ROWS: list[Row] = [
    ("article-0001", datetime(2016, 2, 29, 23, 59, 59, 999_999, tzinfo=UTC), ["a", "ünï", ""], [0, -1, 2**63 - 1], bytes(range(256)), True),
    ("", datetime(1970, 1, 1, tzinfo=UTC), [], [], b"", False),
    ("before", datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC), ["one"], [-(2**63)], b"\x00", True),
]


def test_rich_schema_round_trips(case: tuple[str, str], tmp_path: Path) -> None:
    fmt = build(case, RICH_SCHEMA, tmp_path)
    assert fmt.exact  # no nanosecond field: every mode can carry it
    difference = first_difference(RICH_SCHEMA, RICH_ROWS, round_trip(fmt, RICH_ROWS))
    assert difference is None, difference


ANY_SCHEMA = Schema("user", (Field("id", "int"), Field("data", "any")))
ANY_ROWS: list[Row] = [
    (1, {"name": "x", "tags": ["a", "b"], "nested": {"n": [1, 2.5, None, True, {"k": []}]}}),
    (2, [1, "two", [3.0]]),
    (3, None),
    (4, "text"),
    (5, -0.0),
]


def test_any_field_round_trips_or_is_refused(case: tuple[str, str], tmp_path: Path) -> None:
    try:
        fmt = build(case, ANY_SCHEMA, tmp_path)
    except UnavailableError as error:
        assert "'data' (any)" in str(error) and "\n" not in str(error)
        return
    difference = first_difference(ANY_SCHEMA, ANY_ROWS, round_trip(fmt, ANY_ROWS))
    assert difference is None, difference


def test_single_record_is_a_list_of_one(case: tuple[str, str], tmp_path: Path) -> None:
    row = ("article-0001", datetime(2020, 5, 17, 8, 30, 0, 250_000, tzinfo=UTC), ["cache"], [3], b"\x01" * 60_000, True)
    fmt = build(case, RICH_SCHEMA, tmp_path)
    assert round_trip(fmt, [row]) == [row]


def _assert_data_error(fmt: Format, data: bytes) -> None:
    with pytest.raises(DataError) as raised:
        fmt.to_rows(fmt.decode(data))
    message = str(raised.value)
    assert "\n" not in message and message.startswith(fmt.label)


def test_truncated_input_raises_data_error(case: tuple[str, str], tmp_path: Path) -> None:
    fmt = build(case, BULKLOAD_SCHEMA, tmp_path)
    data = fmt.encode(generate(20, 100))
    _assert_data_error(fmt, data[: len(data) // 2])


def test_corrupt_input_raises_data_error(case: tuple[str, str], tmp_path: Path) -> None:
    fmt = build(case, BULKLOAD_SCHEMA, tmp_path)
    data = fmt.encode(generate(20, 100))
    _assert_data_error(fmt, b"\xff\xfe\xfd" + data[3:])


def test_to_rows_of_something_else_raises_data_error(case: tuple[str, str], tmp_path: Path) -> None:
    fmt = build(case, BULKLOAD_SCHEMA, tmp_path)
    with pytest.raises(DataError, match="not a list of bulkload records"):
        fmt.to_rows(42)


def test_unknown_mode_is_a_usage_error(case: tuple[str, str], tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=f"codec '{case[0]}' has no mode 'nope'"):
        make_format(case[0], BULKLOAD_SCHEMA, "nope", workdir=tmp_path)


def test_default_mode_is_the_first(case: tuple[str, str], tmp_path: Path) -> None:
    codec: Codec = CODECS.get(case[0])()
    assert codec.format(BULKLOAD_SCHEMA, workdir=tmp_path).mode == codec.modes[0]


def test_verify_rows_names_the_first_difference(tmp_path: Path) -> None:
    expected = generate(5, 100)
    wrong = [tuple(row) for row in expected]
    wrong[3] = (*wrong[3][:2], wrong[3][2] + 1.0, *wrong[3][3:])
    integrity = verify_rows(
        wrong,
        expected_hash=canonical_hash(expected),
        hash_rows=canonical_hash,
        expected_rows=lambda: expected,
        difference=partial(first_difference, BULKLOAD_SCHEMA),
    )
    assert not integrity.ok
    assert integrity.detail is not None and integrity.detail.startswith("record 3, field float: expected float")
