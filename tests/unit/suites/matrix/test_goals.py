"""Goals parse, bad goals and prices get one line, and the cost per million reads is checked by hand."""

from __future__ import annotations

import pytest

from stratabench.errors import UsageError
from stratabench.suites.matrix.goals import DEFAULT_PRICES, Goal, Limit, Prices, cost_per_million, parse_goal
from stratabench.suites.matrix.goals import parse_prices


@pytest.mark.parametrize(("text", "goal"), [
    ("p99<2ms,memory<200MB", Goal((Limit("p99", 2e6), Limit("memory", 200e6)))),
    ("cheapest", Goal()),
    ("fastest", Goal(objective="fastest")),
    ("fastest, stored<1.5GB", Goal((Limit("stored", 1.5e9),), "fastest")),
    ("p50 < 500us", Goal((Limit("p50", 500e3),))),
    ("p99<500µs", Goal((Limit("p99", 500e3),))),
    ("P99<1S", Goal((Limit("p99", 1e9),))),
    ("memory<64MiB", Goal((Limit("memory", 64 * 2**20),))),
    ("cost<$0.25", Goal((Limit("cost", 0.25),))),
    ("cost<0.25,cheapest", Goal((Limit("cost", 0.25),))),
])  # fmt: skip
def test_goals_parse(text: str, goal: Goal) -> None:
    assert parse_goal(text) == goal


@pytest.mark.parametrize(("text", "names"), [
    ("", "empty"),
    ("p99", "cannot read 'p99'"),
    ("p99>2ms", "cannot read 'p99>2ms'"),
    ("p99<2", "needs a unit"),
    ("p99<2MB", "needs a unit"),
    ("memory<2ms", "needs a unit"),
    ("latency<2ms", "unknown measure 'latency'"),
    ("p99<0ms", "above zero"),
    ("p99<2ms,p99<3ms", "p99 is given twice"),
    ("cheapest,fastest", "not both"),
    ("p99<2ms;memory<1GB", "cannot read"),
])  # fmt: skip
def test_bad_goals_get_one_line_naming_the_part(text: str, names: str) -> None:
    with pytest.raises(UsageError) as error:
        parse_goal(text)
    message = str(error.value)
    assert names in message and "\n" not in message and "--goal" in message


def test_prices_default_and_set() -> None:
    assert parse_prices(None) == DEFAULT_PRICES
    assert parse_prices(["cpu_hour=0.1", "wire_gb=$0.02"]) == Prices(0.1, 0.02, DEFAULT_PRICES.stored_gb_month)
    for bad in ("cpu=1", "cpu_hour", "cpu_hour=cheap", "cpu_hour=-1"):
        with pytest.raises(UsageError, match="--price") as error:
            parse_prices([bad])
        assert "\n" not in str(error.value)


def test_cost_per_million_by_hand() -> None:
    """A read costing 20 µs of client CPU and 5 µs of server CPU, a 500-byte value, 10,000 values stored:

    - CPU: (20 + 5) µs × 1,000,000 = 25 s; at $0.036 per vCPU-hour, 25 / 3600 × 0.036 = $0.00025;
    - wire: 500 B × 1,000,000 = 0.5 GB; at $0.02 per GB, $0.01;
    - per million reads: $0.01025; stored: 5 MB at $0.10 per GB-month, $0.0005 a month.
    """
    cost = cost_per_million(client_cpu_ns=20_000, server_cpu_ns=5_000, value_bytes=500, stored_bytes=5_000_000,
                            prices=Prices(cpu_hour=0.036, wire_gb=0.02, stored_gb_month=0.10))
    assert cost.client_cpu_s == pytest.approx(20.0) and cost.server_cpu_s == pytest.approx(5.0)
    assert cost.wire_bytes == pytest.approx(5e8)
    assert cost.cpu_dollars == pytest.approx(0.00025)
    assert cost.wire_dollars == pytest.approx(0.01)
    assert cost.per_million == pytest.approx(0.01025)
    assert cost.stored_per_month == pytest.approx(0.0005)


def test_an_embedded_store_has_no_server_cpu_to_pay() -> None:
    cost = cost_per_million(client_cpu_ns=36_000, server_cpu_ns=None, value_bytes=0, stored_bytes=0,
                            prices=Prices(cpu_hour=1.0, wire_gb=0.0, stored_gb_month=0.0))
    assert cost.server_cpu_s is None and cost.per_million == pytest.approx(36 / 3600)
