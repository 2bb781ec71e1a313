"""Tests of the bulkload dataset (stratabench.datasets.bulkload, docs/studies/bulkload.md)."""

from __future__ import annotations

import datetime
import math

import pytest

from stratabench.datasets.canonical import parse_rfc3339nano
from stratabench.datasets.bulkload import (
    JSON_KEYS,
    REFERENCE_HASHES,
    BulkRecord,
    canonical_bytes,
    canonical_hash,
    first_difference,
    generate,
)
from stratabench.datasets.canonical import sha1_hex

FIRST = BulkRecord(
    flag=True,
    number=1816137624592625432,
    real=-2.4122147266495095,
    text="384203C438D4E94BF399CBD88BBCAF",
    time_ns=965186882028350735,
)
FIRST_JSON = (
    '{"bool":true,"int":1816137624592625432,"float":-2.4122147266495095,'
    '"string":"384203C438D4E94BF399CBD88BBCAF","time":"2000-08-02T03:28:02.028350735Z"}'
)


@pytest.fixture(scope="module")
def thousand() -> list[BulkRecord]:
    return generate(1000)


def test_first_record_matches_the_spec() -> None:
    assert generate(1) == [FIRST]
    assert canonical_bytes([FIRST]) == f"[{FIRST_JSON}]\n".encode()


def test_record_fields_and_json_keys() -> None:
    assert BulkRecord._fields == ("flag", "number", "real", "text", "time_ns")
    assert JSON_KEYS == ("bool", "int", "float", "string", "time")


@pytest.mark.parametrize(("size", "length"), [(1, 152), (10, 1_776), (1000, 197_438)])
def test_reference_hashes_and_sizes(size: int, length: int) -> None:
    data = canonical_bytes(generate(size))
    assert len(data) == length
    assert sha1_hex(data) == REFERENCE_HASHES[(size, 100)]


def test_reference_hashes_are_the_published_vectors() -> None:
    assert REFERENCE_HASHES == {
        (1, 100): "666dae3acff790b581a4d5f7b8db2d4708790bba",
        (10, 100): "69e2a61caa30fcff9ea19db1b95611ab9f84fd2a",
        (1_000, 100): "f95cc302db8529e5daabc7211c27616afbe832ba",
        (100_000, 100): "1ba1706bea3a667d765e505133e4261d1652371c",
    }


def test_other_seed_matches_go() -> None:
    # SHA-1 of what Go 1.26's encoding/json Encoder wrote for 1,000 records
    # drawn from rand.New(rand.NewSource(42)) in the order of section 2.6.
    assert canonical_hash(generate(1000, seed=42)) == "fe081369e4a3773a413c4f7583c4d04a6e449755"


def test_generate_is_a_pure_function_and_prefixes_agree(thousand: list[BulkRecord]) -> None:
    assert generate(10) == thousand[:10]
    assert generate(1000) == thousand
    assert generate(0) == []
    assert generate(10, seed=1) != thousand[:10]


def test_generate_refuses_negative_sizes() -> None:
    with pytest.raises(ValueError, match="size must be >= 0"):
        generate(-1)


def test_generated_values_have_the_documented_ranges(thousand: list[BulkRecord]) -> None:
    assert all(type(r) is BulkRecord for r in thousand)
    assert all(16 <= len(r.text) <= 142 and r.text == r.text.upper() for r in thousand)
    assert all(0 <= r.number < 2**63 for r in thousand)
    assert all(0 <= r.time_ns < 2**31 * 10**9 for r in thousand)
    assert 400 < sum(r.flag for r in thousand) < 600


@pytest.mark.slow
def test_reference_dataset_100k() -> None:
    records = generate(100_000)
    last = records[99_999]
    assert last.real == -1.8619554138772036
    assert parse_rfc3339nano("1996-02-03T13:19:28.967731516Z") == last.time_ns
    assert records[3600].real == 2.5686020322490677e-05
    data = canonical_bytes(records)
    assert len(data) == 19_905_292
    assert sha1_hex(data) == "1ba1706bea3a667d765e505133e4261d1652371c"
    assert sha1_hex(data) == REFERENCE_HASHES[(100_000, 100)]


@pytest.mark.slow
def test_seed_42_100k_matches_go() -> None:
    # SHA-1 of Go 1.26's encoding/json output for seed 42; record 66,149 is a
    # tail draw where glibc's log and Go's math.Log differ by one ulp.
    assert canonical_hash(generate(100_000, seed=42)) == "8cd097c55765c36cdad0fdc4e87b562a28eae74a"


# -- canonical form ----------------------------------------------------------


def test_canonical_bytes_accepts_any_sequences(thousand: list[BulkRecord]) -> None:
    expected = canonical_bytes(thousand)
    assert canonical_bytes([list(r) for r in thousand]) == expected
    assert canonical_bytes(tuple(tuple(r) for r in thousand)) == expected
    assert canonical_bytes(iter(thousand)) == expected
    # A (seconds, nanoseconds) pair is the same instant as integer nanoseconds.
    pairs = [(*r[:4], divmod(r.time_ns, 10**9)) for r in thousand]
    assert canonical_bytes(pairs) == expected


def test_canonical_bytes_of_nothing() -> None:
    assert canonical_bytes([]) == b"[]\n"


def test_unusual_values_take_the_exact_path() -> None:
    records = [
        (False, -7, 1.0, 'a"<b>&\n', 0),
        (True, 0, -0.0, "", -1),
        (True, 1, 1.5e-07, "é", 1_500_000_000),
        (False, 2, 2.5686020322490677e-05, "X", 253402300799_999999999),
    ]
    assert canonical_bytes(records) == (
        b'[{"bool":false,"int":-7,"float":1,"string":"a\\"\\u003cb\\u003e\\u0026\\n",'
        b'"time":"1970-01-01T00:00:00Z"},'
        b'{"bool":true,"int":0,"float":-0,"string":"","time":"1969-12-31T23:59:59.999999999Z"},'
        b'{"bool":true,"int":1,"float":1.5e-7,"string":"\xc3\xa9","time":"1970-01-01T00:00:01.5Z"},'
        b'{"bool":false,"int":2,"float":0.000025686020322490677,"string":"X",'
        b'"time":"9999-12-31T23:59:59.999999999Z"}]\n'
    )


def test_fast_and_exact_paths_agree(thousand: list[BulkRecord]) -> None:
    # One record that needs escaping sends the whole list down the exact path.
    escaped = [*thousand, (True, 1, 0.5, "<", 0)]
    data = canonical_bytes(escaped)
    assert data[:-1].startswith(canonical_bytes(thousand)[:-2])
    assert data.endswith(b',{"bool":true,"int":1,"float":0.5,"string":"\\u003c","time":"1970-01-01T00:00:00Z"}]\n')


@pytest.mark.parametrize(
    ("record", "error", "message"),
    [
        ((1, 2, 0.5, "A", 0), TypeError, "record 1 field 'bool': expected a bool, got int 1"),
        ((True, True, 0.5, "A", 0), TypeError, "record 1 field 'int': expected an int, got bool True"),
        ((True, 2.0, 0.5, "A", 0), TypeError, "record 1 field 'int': expected an int, got float 2.0"),
        ((True, 2, 1, "A", 0), TypeError, "record 1 field 'float': expected a float, got int 1"),
        ((True, 2, math.nan, "A", 0), ValueError, "record 1 field 'float': JSON cannot hold nan"),
        ((True, 2, 0.5, b"A", 0), TypeError, "record 1 field 'string': expected a str, got bytes b'A'"),
        (
            (True, 2, 0.5, "A", datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)),
            TypeError,
            "record 1 field 'time': expected integer nanoseconds or a (seconds, nanos) pair, got datetime",
        ),
        ((True, 2, 0.5, "A", 10**21), ValueError, "record 1 field 'time': year 33658 is outside 0-9999"),
        ((True, 2, 0.5, "A"), ValueError, "record 1: expected 5 fields, got 4"),
        ((True, 2, 0.5, "A", 0, 0), ValueError, "record 1: expected 5 fields, got 6"),
        ({"bool": True}, TypeError, "record 1 is a mapping"),
        ("ABCDE", TypeError, "record 1 is a str, not a 5-sequence"),
    ],
)
def test_canonical_bytes_names_bad_records(record: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        canonical_bytes([FIRST, record])  # type: ignore[list-item]
    assert str(info.value).startswith(message)


# -- first_difference ----------------------------------------------------------


def test_no_difference_is_none(thousand: list[BulkRecord]) -> None:
    assert first_difference(thousand, [tuple(r) for r in thousand]) is None
    assert first_difference([], []) is None


def test_float_difference_message() -> None:
    expected = generate(3601)
    actual = list(expected)
    actual[3600] = actual[3600]._replace(real=2.5686e-05)
    assert first_difference(expected, actual) == (
        "record 3600 field 'float': expected 2.5686020322490677e-05, got 2.5686e-05"
    )


def test_time_difference_shows_rfc3339() -> None:
    actual = [FIRST._replace(time_ns=965186882028350000)]
    assert first_difference([FIRST], actual) == (
        "record 0 field 'time': expected 965186882028350735 (2000-08-02T03:28:02.028350735Z), "
        "got 965186882028350000 (2000-08-02T03:28:02.02835Z)"
    )


def test_type_differences_count() -> None:
    assert first_difference([FIRST], [FIRST._replace(flag=1)]) == (
        "record 0 field 'bool': expected True, got 1"
    )
    assert first_difference([FIRST], [FIRST._replace(real=-0.0)]) == (
        "record 0 field 'float': expected -2.4122147266495095, got -0.0"
    )
    assert first_difference([(True, 1, 0.0, "", 0)], [(True, 1, -0.0, "", 0)]) == (
        "record 0 field 'float': expected 0.0, got -0.0"
    )
    dt = datetime.datetime(2000, 8, 2, 3, 28, 2, 28350, tzinfo=datetime.timezone.utc)
    assert first_difference([FIRST], [FIRST._replace(time_ns=dt)]) == (
        "record 0 field 'time': expected 965186882028350735 (2000-08-02T03:28:02.028350735Z), "
        "got datetime.datetime(2000, 8, 2, 3, 28, 2, 28350, tzinfo=datetime.timezone.utc)"
    )
    # Equal instants in the two accepted spellings are no difference.
    assert first_difference([FIRST], [(*FIRST[:4], (965186882, 28350735))]) is None


def test_length_mismatch_messages(thousand: list[BulkRecord]) -> None:
    assert first_difference(thousand, thousand[:999]) == (
        "length mismatch: expected 1000 records, got 999"
    )
    assert first_difference(thousand[:2], [FIRST._replace(number=1)]) == (
        "record 0 field 'int': expected 1816137624592625432, got 1; "
        "also length mismatch: expected 2 records, got 1"
    )
    assert first_difference([FIRST], [FIRST[:4]]) == "record 0: expected 5 fields, got 4"


def test_long_values_are_cut_in_messages() -> None:
    message = first_difference([FIRST], [FIRST._replace(text="A" * 500)])
    assert message is not None
    assert message == (
        "record 0 field 'string': expected '384203C438D4E94BF399CBD88BBCAF', got '" + "A" * 96 + "..."
    )
    assert len(message) < 250


# -- parsing time ----------------------------------------------------------------


def test_time_parse_round_trips_the_canonical_spelling(thousand: list[BulkRecord]) -> None:
    data = canonical_bytes(thousand).decode()
    texts = [part.split('"time":"')[1].split('"')[0] for part in data.split("},{")]
    assert [parse_rfc3339nano(t) for t in texts] == [r.time_ns for r in thousand]
    assert sum(1 for t in texts if "." in t and len(t) < 30) > 50  # trimmed fractions seen


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("2000-08-02T03:28:02.028350735Z", 965186882028350735),
        ("2000-08-02T03:28:02.02835Z", 965186882028350000),
        ("1970-01-01T00:00:00Z", 0),
        ("1969-12-31T23:59:59.999999999Z", -1),
        ("2000-02-29T00:00:00Z", 951782400 * 10**9),
        ("0000-01-01T00:00:00Z", -62167219200 * 10**9),
        ("9999-12-31T23:59:59.999999999Z", 253402300799_999999999),
        ("2000-08-02T05:28:02.028350735+02:00", 965186882028350735),
        ("2000-08-01T22:58:02-04:30", 965186882 * 10**9),
    ],
)
def test_time_parse_examples(text: str, ns: int) -> None:
    assert parse_rfc3339nano(text) == ns


@pytest.mark.parametrize(
    "text",
    [
        "",
        "2000-08-02",
        "2000-08-02 03:28:02Z",
        "2000-08-02T03:28:02",
        "2000-08-02T03:28:02.Z",
        "2000-08-02T03:28:02.0123456789Z",
        "2000-08-02T03:28:02.１２Z",
        "2000-13-02T03:28:02Z",
        "1900-02-29T03:28:02Z",
        "2000-08-02T24:00:00Z",
        "2000-08-02T03:60:00Z",
        "2000-08-02T03:28:60Z",
        "2000-08-02T03:28:02z",
        "2000-08-02T03:28:02+24:00",
        "+2000-08-02T03:28:02Z",
    ],
)
def test_time_parse_refuses_other_text(text: str) -> None:
    with pytest.raises(ValueError):
        parse_rfc3339nano(text)


def test_time_parse_refuses_non_strings() -> None:
    with pytest.raises(ValueError, match="not an RFC 3339 time"):
        parse_rfc3339nano(965186882)  # type: ignore[arg-type]
