"""The parts every parking server shares: query decoding, versions, the quarter-hour rule, money."""

from __future__ import annotations

from decimal import Decimal

import pytest

from stratabench.systems.parking.protocol import Answer, Internal, ServiceDescr, decode_query, money
from stratabench.systems.parking.protocol import parse_decimal, parse_int, parse_version, price_for, rounded_minutes


def test_query_decoding_follows_the_reference_server() -> None:
    assert decode_query("a=1+2&&b=%D0%9A%2B&a=3&flag") == {"a": "3", "b": "\u041a+", "flag": ""}


@pytest.mark.parametrize("version", ["3", "-1", "x", "", "1.0", "\u0662", "9" * 30])
def test_a_version_outside_0_1_2_answers_bad_protocol(version: str) -> None:
    with pytest.raises(Answer) as refused:
        parse_version({"version": version})
    assert refused.value.body["status"] == "bad_protocol"


def test_an_absent_version_is_0() -> None:
    assert parse_version({}) == 0


@pytest.mark.parametrize(("minutes", "first_hour", "rounded"),
                         [(120, True, 120), (61, True, 75), (1, True, 15), (0, True, 15), (0, False, 0),
                          (1, False, 15), (15, True, 15), (16, False, 30)])  # fmt: skip
def test_the_quarter_hour_rule_of_spec_5_2(minutes: int, first_hour: bool, rounded: int) -> None:
    assert rounded_minutes(minutes, first_hour=first_hour) == rounded


def test_prices_are_exact_decimals() -> None:
    assert price_for(15, Decimal(51)) == (Decimal("0.25"), Decimal("12.75"))
    assert price_for(120, Decimal(51))[1] == Decimal("102")


def test_money_has_two_decimals_rounded_half_to_even() -> None:
    assert [money(Decimal(v)) for v in ("102", "89.25", "0.125", "0.135", "1E+3")] == [
        "102.00", "89.25", "0.12", "0.14", "1000.00"]  # fmt: skip


@pytest.mark.parametrize("value", ["abc", "NaN", "1e3", "0x10", "1_000", "", True, None, "Infinity"])
def test_a_malformed_decimal_is_an_internal_error(value: object) -> None:
    with pytest.raises(Internal):
        parse_decimal(value)


def test_integers_come_as_json_numbers_or_strings_never_floats() -> None:
    assert parse_int("120") == parse_int(120) == 120
    for bad in (1.5, "1.5", True, "12a"):
        with pytest.raises(Internal):
            parse_int(bad)


def test_service_descr_speaks_each_versions_vocabulary() -> None:
    assert ServiceDescr({"parking_object_id": "1333", "hours": "1.5"}, 0).prepaid_minutes() == 90
    assert ServiceDescr({"parking_id": 1333, "duration": "61"}, 2).parking_name == "1333"
    with pytest.raises(Answer) as refused:
        ServiceDescr({"parking_id": "1333"}, 2).prepaid_minutes()
    assert refused.value.body["status_code"] == "invalid_duration"
    with pytest.raises(Internal):
        ServiceDescr(["not", "an", "object"], 2)
