"""Tests of RFC 3339 nanosecond times (stratabench.layers.codecs.rfc3339)."""

from __future__ import annotations

import random

import pytest

from stratabench.datasets.canonical import format_rfc3339nano, parse_rfc3339nano


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("1970-01-01T00:00:00Z", 0),
        ("1970-01-01T00:00:00.000000001Z", 1),
        ("1969-12-31T23:59:59.999999999Z", -1),
        ("2000-08-02T03:28:02.028350735Z", 965_186_882_028_350_735),
        ("2000-08-02T03:28:02.5Z", 965_186_882_500_000_000),
        ("2038-01-19T03:14:07.99Z", (2**31 - 1) * 10**9 + 990_000_000),
        ("2000-08-02T05:28:02.028350735+02:00", 965_186_882_028_350_735),
        ("2000-08-01T22:58:02-04:30", 965_186_882_000_000_000),
        ("0001-01-01T00:00:00Z", -62_135_596_800 * 10**9),
    ],
)
def test_parses_exactly(text: str, ns: int) -> None:
    assert parse_rfc3339nano(text) == ns


def test_round_trips_random_instants_and_agrees_with_the_dataset_parser() -> None:
    rand = random.Random(20180101)
    for _ in range(2000):
        # Every fraction length, from whole seconds to nine digits.
        step = rand.choice((1, 10, 1000, 10**6, 10**8, 10**9))
        ns = rand.randrange(-(2**61), 2**62) // step * step
        text = format_rfc3339nano(ns)
        assert parse_rfc3339nano(text) == ns, text


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Z",
        "2000-08-02",
        "2000-08-02 03:28:02Z",
        "2000-08-02T03:28:02",
        "2000-08-02T03:28:02.Z",
        "2000-08-02T03:28:02.0123456789Z",
        "2000-08-02T03:28:02.12a4Z",
        "2000-08-02T03:28:02.+12Z",
        "2000-08-02T03:28:02.１２Z",
        "2000-13-02T03:28:02Z",
        "2000-02-30T03:28:02Z",
        "2000-08-02T24:00:00Z",
        "2000-08-02T03:28:60Z",
        "2000-08-02T03:28:02z",
        "2000-08-02T03:28:02+0200",
    ],
)
def test_refuses_what_is_not_rfc3339(text: str) -> None:
    with pytest.raises(ValueError):
        parse_rfc3339nano(text)


def test_refuses_non_strings() -> None:
    with pytest.raises(ValueError, match="not an RFC 3339 time"):
        parse_rfc3339nano(12345)  # type: ignore[arg-type]
