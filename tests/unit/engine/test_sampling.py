"""Adaptive sampling: the stopping rule on synthetic sample streams, honest levels, instability flags."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

import pytest

from stratabench.engine.clock import FakeClock
from stratabench.engine.measure import measure_operation
from stratabench.engine.operation import CellSpec, Operation
from stratabench.engine.sampling import (Allowance, Ask, Stop, StoppingRule, best_half_width, meeting_count,
                                          narrowing_count)
from stratabench.options import EngineOptions
from stratabench.results.stats import floor_samples, instability, level_label, summarize

ADAPTIVE = EngineOptions(min_samples=6, max_samples=40, target=0.02, cell_budget_ns=1_000_000_000,
                         warmups=0, min_sample_ns=1, memory_samples=0)


def sample_until_stopped(rule: StoppingRule, stream: Iterator[float], sample_ns: int) -> tuple[list[float], Stop]:
    """Feed the rule one sample at a time, each taking ``sample_ns``, as the engine does."""
    samples: list[float] = []
    while (stop := rule.stop(samples, sample_ns * len(samples))) is None:
        samples.append(next(stream))
    return samples, stop


def test_a_stable_stream_stops_at_the_floor() -> None:
    samples, stop = sample_until_stopped(StoppingRule(ADAPTIVE), itertools.repeat(100.0), 10_000_000)
    assert len(samples) == 6 and stop.reason == "target" and not stop.target_missed


def test_a_stream_that_settles_stops_once_its_interval_is_within_the_target() -> None:
    # Two disturbed samples first, then steady ones: the interval of the median
    # drops inside ±2% once the order statistics bounding it are steady.
    stream = itertools.chain([150.0, 60.0], itertools.repeat(100.0))
    samples, stop = sample_until_stopped(StoppingRule(ADAPTIVE), stream, 10_000_000)
    assert stop.reason == "target"
    assert 6 < len(samples) < 40
    assert summarize(samples).relative_half_width <= 0.02
    assert summarize(samples[:-1]).relative_half_width > 0.02  # it stopped at the first sample that sufficed


def test_a_noisy_stream_runs_to_its_budget_and_is_flagged() -> None:
    noise = random.Random(7)
    stream = (noise.uniform(50.0, 150.0) for _ in itertools.count())
    samples, stop = sample_until_stopped(StoppingRule(ADAPTIVE), stream, 100_000_000)
    assert stop.reason == "budget" and stop.target_missed
    # 9 samples of 0.1 s: the next interval that could be narrower needs 12, which the 1 s budget does not pay for.
    assert len(samples) == 9
    flags = instability(summarize(samples), target=0.02, target_missed=True, budget_s=1.0)
    assert flags[0].startswith("wall_ns: interval ±") and "target, from 9 samples (96.09%); 1 s budget spent" in flags[0]


@pytest.mark.parametrize(("budget_ns", "taken"), [(850_000_000, 6), (900_000_000, 9)])
def test_samples_that_cannot_narrow_the_interval_are_not_taken(budget_ns: int, taken: int) -> None:
    # Six to eight samples all have their whole range as the interval: a budget that pays for eight samples of
    # 0.1 s but not nine stops at six (it took eight before), one that pays for nine takes nine.
    noise = random.Random(7)
    stream = (noise.uniform(50.0, 150.0) for _ in itertools.count())
    options = EngineOptions(min_samples=6, max_samples=40, target=0.02, cell_budget_ns=budget_ns, min_sample_ns=1)
    samples, stop = sample_until_stopped(StoppingRule(options), stream, 100_000_000)
    assert (len(samples), stop.reason) == (taken, "budget")


def test_the_interval_narrows_at_nine_twelve_and_fifteen_samples() -> None:
    assert [narrowing_count(n) for n in (6, 7, 8, 9, 11, 12)] == [9, 9, 9, 12, 12, 15]


def test_a_noisy_stream_of_quick_samples_stops_at_the_cap() -> None:
    noise = random.Random(8)
    stream = (noise.uniform(50.0, 150.0) for _ in itertools.count())
    samples, stop = sample_until_stopped(StoppingRule(ADAPTIVE), stream, 1_000)
    assert (len(samples), stop.reason, stop.target_missed) == (40, "cap", True)


def test_a_fixed_count_is_exact_whatever_the_noise() -> None:
    rule = StoppingRule(EngineOptions(samples=3, min_sample_ns=1))
    noise = random.Random(9)
    samples, stop = sample_until_stopped(rule, (noise.uniform(1, 100) for _ in itertools.count()), 1_000)
    assert (len(samples), stop.reason, stop.target_missed) == (3, "fixed", False)


def test_slow_samples_stop_at_the_time_cap_below_the_floor_but_never_under_three() -> None:
    rule = StoppingRule(EngineOptions(min_sample_ns=1, max_sample_ns=1_000_000_000))
    samples, stop = sample_until_stopped(rule, itertools.repeat(2e9), 2_000_000_000)
    assert (len(samples), stop.reason, stop.target_missed) == (3, "time cap", True)


def test_the_engine_follows_the_rule_and_flags_the_result() -> None:
    clock = FakeClock()
    noise = random.Random(10)

    def call() -> None:
        clock.advance(int(noise.uniform(5_000_000, 15_000_000)))

    measurement = measure_operation(Operation(call=call, trace_memory=False),
                                    EngineOptions(cell_budget_ns=200_000_000, warmups=0, min_sample_ns=1,
                                                  memory_samples=0), clock.clock)
    assert measurement.stop is not None and measurement.stop.reason == "budget"
    result = measurement.result(CellSpec("s", "noisy"))
    assert result.unstable and result.flags[0].startswith("thread_cpu_ns: interval ±")
    steady = FakeClock()
    stable = measure_operation(Operation(call=lambda: steady.advance(1_000), trace_memory=False),
                               EngineOptions(warmups=0, min_sample_ns=100_000, memory_samples=0), steady.clock)
    assert len(stable.samples["wall_ns"]) == 6 and stable.result(CellSpec("s", "stable")).flags == ()


@pytest.mark.parametrize(("confidence", "floor"), [(0.75, 3), (0.9, 5), (0.95, 6), (0.99, 8)])
def test_the_floor_is_the_fewest_samples_that_reach_the_level(confidence: float, floor: int) -> None:
    assert floor_samples(confidence) == floor
    assert summarize([float(x) for x in range(floor)]).ci_level >= confidence
    assert summarize([float(x) for x in range(floor - 1)]).ci_level < confidence


@pytest.mark.parametrize("n", range(1, 60))
def test_a_printed_level_never_claims_more_than_the_interval_covers(n: int) -> None:
    level = summarize([float(x) for x in range(n)]).ci_level
    printed = float(level_label(level).rstrip("%")) / 100
    assert printed <= level < printed + 0.0001
    assert (level_label(level) == "95%") == (0.95 <= level < 0.9501)


@pytest.mark.parametrize(
    ("samples", "flagged"),
    [
        ([100.0, 101.0, 99.0, 100.0, 100.5, 99.5], False),
        ([100.0, 130.0, 80.0, 100.0, 120.0, 85.0], True),
        # A far sample and a stdev of 25% of the mean around a tight interval: the median is sure, no flag.
        ([100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 400.0], False),
    ],
)
def test_only_an_interval_wider_than_the_target_flags_a_cell_with_its_metric_and_figure(
        samples: list[float], flagged: bool) -> None:
    flags = instability(summarize(samples), target=0.02, metric="thread_cpu_ns", counted="rounds")
    assert bool(flags) == flagged
    for flag in flags:
        assert flag == "thread_cpu_ns: interval ±25.0% of the median > ±2.0% target, from 6 rounds (96.87%)"


def test_a_fixed_count_with_a_wide_interval_is_flagged_with_its_width() -> None:
    assert instability(summarize([100.0, 112.0, 104.0])) == [
        "wall_ns: interval ±5.8% of the median > ±5.0% limit, from 3 samples (75%)"]
    assert instability(summarize([100.0, 104.0, 102.0])) == []


def test_the_best_next_interval_is_that_of_the_middle_values_the_next_count_keeps() -> None:
    # Six rounds, one slow: nine rounds' interval (2nd to 8th of nine) holds at least the 2nd to 5th of these six.
    assert best_half_width([100.0, 101.0, 99.0, 130.0, 100.0, 100.0], 9) == pytest.approx(0.5 / 100)  # (101 - 100) / 2 over 100
    # A spread in the middle, not one far round: more rounds cannot bring it within ±2%.
    assert best_half_width([100.0, 120.0, 100.0, 120.0, 100.0, 120.0], 9) == pytest.approx(10 / 110)
    # Nine rounds, two slow at one end: twelve rounds' interval (3rd to 10th) holds the 3rd to 7th of these nine.
    assert best_half_width([100.0] * 7 + [130.0, 130.0], 12) == 0.0


def test_a_cell_asks_for_the_fewest_count_up_to_the_cap_that_could_meet_its_target() -> None:
    two_far = [143.0, 100.0, 120.0, 100.0, 100.0, 99.0]  # arrow/table access: two far rounds at one end
    # Nine rounds keep the 120 (2nd to 8th of nine hold the 2nd to 5th of these six); twelve drop both.
    assert best_half_width(two_far, 9) == pytest.approx(0.1) and best_half_width(two_far, 12) == 0.0
    assert meeting_count(two_far, 0.05, 12) == 12
    assert meeting_count(two_far, 0.05, 9) is None  # the cap (or the old rule, the next count only) stops at 9
    assert meeting_count([100.0, 101.0, 99.0, 130.0, 100.0, 100.0], 0.05, 15) == 9  # one far round: nine suffice
    # A spread among the middle values: no count up to the cap could meet it, so the cell asks for nothing.
    assert meeting_count([100.0, 120.0, 100.0, 120.0, 100.0, 120.0], 0.05, 15) is None
    # The next count is always tried, even above the cap.
    assert meeting_count([100.0] * 7 + [130.0, 130.0], 0.05, 9) == 12


def test_the_allowance_grants_the_cheapest_asks_that_fit_its_share_and_no_more() -> None:
    allowance = Allowance(0.1)
    asks = [Ask("dear", 9, 300.0), Ask("cheap", 9, 100.0), Ask("middle", 9, 200.0)]
    # A tenth of 3000 ns of the run's worker time: the cheapest two fit (300), the dear one does not.
    assert [ask.key for ask in allowance.grant(asks, 3000)] == ["cheap", "middle"]
    assert allowance.granted_ns == 300.0
    # The allowance was fixed at the first ask: the rounds it paid for do not grow it.
    assert allowance.grant([Ask("dear", 9, 300.0)], 6000) == []
    assert allowance.total_ns == 300.0 and allowance.granted_ns == 300.0
    assert Allowance(0.0).grant([Ask("free", 9, 0.5)], 10**12) == []
