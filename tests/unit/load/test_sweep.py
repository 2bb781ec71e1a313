from __future__ import annotations

from dataclasses import replace

import pytest

from stratabench.errors import UsageError
from stratabench.load.run import merge_reports
from stratabench.load.sweep import SweepLimits, default_rates, sweep
from tests.unit.load.reports import SPEC, report


def test_default_rates_spread_around_the_closed_loop_throughput() -> None:
    assert default_rates(10_000) == (2500.0, 5000.0, 7000.0, 8000.0, 9000.0, 10000.0, 11000.0, 12000.0, 15000.0, 20000.0)
    with pytest.raises(UsageError, match="the closed loop answered no request"):
        default_rates(0)


def test_limits_name_what_was_passed() -> None:
    limits = SweepLimits(p99_ns=2_000, error_fraction=0.1)
    fast = merge_reports(SPEC, [report(0, [[1000] * 10] * 5)])
    slow = merge_reports(SPEC, [report(0, [[1000] * 10] * 4 + [[9000] * 10])])
    failing = merge_reports(SPEC, [report(0, [[1000] * 10] * 5, errors=20)])
    assert limits.exceeded(fast) is None
    assert limits.exceeded(slow) == "p99 9.01 µs over the 2.00 µs limit"  # 9000 ns kept within 0.1%
    assert limits.exceeded(failing) == "28.6% of requests failed, over the 10.0% limit"
    late = merge_reports(replace(SPEC, rate_per_s=100.0), [report(0, [[1000]] * 5, scheduled=500)])
    assert limits.exceeded(late) == "the open loop fell behind its schedule"


@pytest.mark.parametrize(("rates", "message"), [((), "a sweep needs at least one rate"),
                                                ((100.0, 0.0), "--rate must be a positive number, not 0")])
def test_bad_rates_are_refused_before_anything_runs(rates: tuple[float, ...], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        sweep(SPEC, rates)


@pytest.mark.parametrize(("p99", "error"), [(0.0, "p99 limit must be a positive time"), (-1.0, "positive time")])
def test_bad_limits_are_refused(p99: float, error: str) -> None:
    with pytest.raises(UsageError, match=error):
        SweepLimits(p99_ns=p99)
