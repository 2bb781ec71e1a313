"""Tests of the canonical-form helpers (stratabench.datasets.canonical).

Expected spellings were printed by Go 1.26's ``encoding/json`` Encoder.
"""

from __future__ import annotations

import math

import pytest

from stratabench.datasets.canonical import go_json_float, go_json_string, rfc3339nano, sha1_hex


def test_sha1_hex() -> None:
    assert sha1_hex(b"") == "da39a3ee5e6b4b0d3255bfef95601890afd80709"
    assert sha1_hex(b"abc") == "a9993e364706816aba3e25717850c26c9cd0d89d"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (-0.0, "-0"),
        (0.0, "0"),
        (2.5686020322490677e-05, "0.000025686020322490677"),
        (1e21, "1e+21"),
        (1.5e-07, "1.5e-7"),
        (1e-06, "0.000001"),
        (9.99e-07, "9.99e-7"),
        (1e20, "100000000000000000000"),
        (123456789012345678.0, "123456789012345680"),
        (5e-324, "5e-324"),
        (-1.7976931348623157e308, "-1.7976931348623157e+308"),
        (1e-100, "1e-100"),
        (0.1, "0.1"),
        (1e16, "10000000000000000"),
        (123.456, "123.456"),
        (-1e-07, "-1e-7"),
        (999999999999999999999.0, "1e+21"),
        (-2.4122147266495095, "-2.4122147266495095"),
    ],
)
def test_floats_are_spelled_like_go(value: float, text: str) -> None:
    assert go_json_float(value) == text


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_floats_are_refused(value: float) -> None:
    with pytest.raises(ValueError, match="JSON cannot hold"):
        go_json_float(value)


@pytest.mark.parametrize("value", [1, True, "1.0"])
def test_non_floats_are_refused(value: object) -> None:
    with pytest.raises(TypeError, match="expected a float"):
        go_json_float(value)  # type: ignore[arg-type]


def test_strings_are_escaped_like_go() -> None:
    text = 'a"b\\c\n\r\t\b\f\x01\x1f<>&\u2028\u2029\x7f é 😀'
    assert go_json_string(text) == (
        '"a\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f\\u003c\\u003e\\u0026'
        '\\u2028\\u2029\x7f é 😀"'
    )


def test_plain_strings_are_only_quoted() -> None:
    assert go_json_string("") == '""'
    assert go_json_string("384203C438D4E94BF399CBD88BBCAF") == '"384203C438D4E94BF399CBD88BBCAF"'


def test_invalid_utf8_becomes_replacement_characters() -> None:
    # Go writes \ufffd for each invalid byte; surrogateescape keeps one lone
    # surrogate per such byte.
    assert go_json_string(b"a\xff\xfeb".decode("utf-8", "surrogateescape")) == '"a\\ufffd\\ufffdb"'


@pytest.mark.parametrize(
    ("seconds", "nanos", "text"),
    [
        (965186882, 28350735, "2000-08-02T03:28:02.028350735Z"),
        (0, 0, "1970-01-01T00:00:00Z"),
        (-1, 100, "1969-12-31T23:59:59.0000001Z"),
        (1, 500000000, "1970-01-01T00:00:01.5Z"),
        (1, 1, "1970-01-01T00:00:01.000000001Z"),
        (951782400, 0, "2000-02-29T00:00:00Z"),
        (253402300799, 999999999, "9999-12-31T23:59:59.999999999Z"),
        (-62167219200, 0, "0000-01-01T00:00:00Z"),
        (2**31 - 1, 0, "2038-01-19T03:14:07Z"),
    ],
)
def test_rfc3339nano_matches_go(seconds: int, nanos: int, text: str) -> None:
    assert rfc3339nano(seconds, nanos) == text


@pytest.mark.parametrize("seconds", [253402300800, -62167219201])
def test_rfc3339nano_refuses_years_go_refuses(seconds: int) -> None:
    with pytest.raises(ValueError, match="outside 0-9999"):
        rfc3339nano(seconds)


@pytest.mark.parametrize("nanos", [-1, 1_000_000_000])
def test_rfc3339nano_refuses_out_of_range_nanos(nanos: int) -> None:
    with pytest.raises(ValueError, match="nanos must be"):
        rfc3339nano(0, nanos)
