"""The machine probe driven by a fake clock: when a sample is retaken, which value is kept, what is recorded."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from stratabench.engine.clock import FakeClock
from stratabench.engine.measure import measure_operation
from stratabench.engine.operation import CellSpec, Operation
from stratabench.engine.probe import (MAX_RETAKES, PROBE_WINDOW, SETTLE_CAP_NS, SETTLED_PROBES, ProbeMedian,
                                      machine_probe, take_sample)
from stratabench.engine.rounds import run_rounds
from stratabench.engine.sampling import RoundPlan
from stratabench.options import EngineOptions
from stratabench.results.records import CellResult, MetricResult, Retake

MEDIAN = 100


def scripted_probe(clock: FakeClock, readings: list[int]) -> tuple[Callable[[], int], Iterator[int]]:
    """A probe on the fake clock that reads ``readings`` in turn (each moves the clock by its reading)."""
    script = iter(readings)
    return machine_probe(clock.clock, lambda: clock.advance(next(script))), script


def samples(values: list[int]) -> Callable[[], int]:
    taken = iter(values)
    return lambda: next(taken)


def test_a_sample_between_normal_probes_is_kept_and_nothing_is_set_aside() -> None:
    clock = FakeClock()
    probe, script = scripted_probe(clock, [100, 119])
    taken = take_sample(samples([7]), probe, MEDIAN, clock.clock)
    assert (taken.kept, taken.probe_ns, taken.set_aside) == (7, 119.0, [])
    assert next(script, None) is None  # exactly the two probes around it


def test_a_sample_a_probe_says_was_slow_is_set_aside_and_retaken_once_the_probe_reads_normal_twice_in_a_row() -> None:
    clock = FakeClock()
    # Around the first sample: 100 then 150 (slow). The wait: 150, 100, 150, 100, 100 (two normal in a row).
    # Around the retake: 100, 110.
    probe, script = scripted_probe(clock, [100, 150, 150, 100, 150, 100, 100, 100, 110])
    taken = take_sample(samples([30, 10]), probe, MEDIAN, clock.clock)
    assert taken.kept == 10
    assert taken.probe_ns == 110.0
    assert taken.set_aside == [(30, 150.0)]
    assert next(script, None) is None  # the wait stopped at the second normal reading in a row, not before or after


def test_retakes_stop_at_their_cap_and_keep_the_last_sample_taken_not_the_fastest() -> None:
    clock = FakeClock()
    probe, _ = scripted_probe(clock, [5_000_000] * 100)  # 5 ms a reading: the wait ends at its cap
    taken = take_sample(samples([30, 10, 20]), probe, MEDIAN, clock.clock)
    assert len(taken.set_aside) == MAX_RETAKES
    # Chosen by the probe alone: keeping the fastest of the three (10) would bias every cell low.
    assert taken.kept == 20
    assert [value for value, _ in taken.set_aside] == [30, 10]


def test_the_wait_for_a_normal_probe_ends_at_its_cap() -> None:
    clock = FakeClock()
    reading = 1_000_000  # each slow probe moves the clock by 1 ms
    readings: list[int] = []

    def work() -> None:
        readings.append(reading)
        clock.advance(reading)

    probe = machine_probe(clock.clock, work)
    take_sample(samples([1, 2, 3]), probe, MEDIAN, clock.clock)
    waits = len(readings) - 2 * (MAX_RETAKES + 1)  # every probe besides the two around each sample
    assert waits == MAX_RETAKES * SETTLE_CAP_NS // reading
    assert SETTLED_PROBES > 1


def test_the_prepare_step_runs_before_each_sample_s_first_probe() -> None:
    clock = FakeClock()
    events: list[str] = []
    readings = iter([100, 200, 100, 100, 100, 100])

    def work() -> None:
        events.append("probe")
        clock.advance(next(readings))

    def sample() -> int:
        events.append("sample")
        return 1

    take_sample(sample, machine_probe(clock.clock, work), MEDIAN, clock.clock, lambda: events.append("prepare"))
    assert events == ["prepare", "probe", "sample", "probe", "probe", "probe", "prepare", "probe", "sample", "probe"]


def costs(clock: FakeClock, *walls: int) -> Operation:
    """An operation whose calls cost ``walls`` in turn, then the last one."""
    calls = iter(walls)
    last = walls[-1]

    def call() -> None:
        clock.advance(next(calls, last))

    return Operation(call=call, trace_memory=False)


OPTIONS = EngineOptions(warmups=0, min_sample_ns=0, memory_samples=0)


def test_a_probed_round_keeps_the_retake_and_records_the_sample_set_aside_with_its_probe() -> None:
    clock = FakeClock()
    # A slow sample (2,000) and its retake (1,000); no warm-up.
    op = costs(clock, 2_000, 1_000)
    readings = iter([100, 300, 100, 100, 100, 105])
    measurement = measure_operation(op, OPTIONS, clock.clock, RoundPlan(4, 1, 1, False, MEDIAN),
                                    probe_work=lambda: clock.advance(next(readings)))
    assert measurement.samples["wall_ns"] == [1_000]
    assert measurement.probe_ns == [105.0]
    assert measurement.retaken == [Retake(4, 300.0, MEDIAN, {"wall_ns": 2_000, "cpu_ns": 2_000, "thread_cpu_ns": 2_000})]
    result = measurement.result(CellSpec("fake", "cell"))
    assert result.retaken[0].probe_ratio == 3.0
    assert result.probe_ns == (105.0,)


def test_without_a_probe_median_nothing_is_probed_or_retaken() -> None:
    clock = FakeClock()
    op = costs(clock, 2_000, 1_000)

    def never() -> None:
        raise AssertionError("probed without a median")

    measurement = measure_operation(op, OPTIONS, clock.clock, RoundPlan(4, 1, 1, False), probe_work=never)
    assert measurement.samples["wall_ns"] == [2_000]
    assert (measurement.probe_ns, measurement.retaken) == ([], [])


def test_the_probe_median_is_the_parent_s_reading_until_workers_report_then_theirs() -> None:
    readings = iter(range(1, 100))
    median = ProbeMedian.measured(lambda: next(readings), readings=3)
    assert median.median_ns == 4.0  # the slower of (1, 2), (3, 4), (5, 6): 2, 4, 6
    median.add([300.0, 100.0, 200.0])
    assert median.median_ns == 200.0
    assert ProbeMedian().median_ns is None


def test_the_probe_median_follows_a_shift_that_lasts_and_not_a_short_slow_window() -> None:
    median = ProbeMedian(250.0)
    median.add([250.0] * PROBE_WINDOW)
    median.add([600.0] * (PROBE_WINDOW // 2))  # a slow window of fewer figures than half the window
    assert median.median_ns == 250.0
    median.add([600.0])  # now most of the window: the machine (or the round's zygote) reads slower for good
    assert median.median_ns == 600.0


@pytest.mark.parametrize("retake", [True, False])
def test_the_run_hands_each_visit_the_median_of_the_probe_figures_so_far_and_merges_them(retake: bool) -> None:
    options = EngineOptions(samples=3, retake=retake)
    plans: list[RoundPlan] = []
    spec = CellSpec("fake", "cell")

    def measure(spec: CellSpec, plan: RoundPlan) -> CellResult:
        plans.append(plan)
        probe_ns = (1_000.0 * (plan.number + 1),) if plan.probe_median_ns is not None else ()
        retaken = (Retake(plan.number, 9_000.0, plan.probe_median_ns, {"wall_ns": 2.0}),) if plan.number == 1 and retake else ()
        return CellResult("fake", "cell", {}, "python", "ok", loops=1,
                          metrics={"wall_ns": MetricResult.of([1.0])}, probe_ns=probe_ns, retaken=retaken)

    [result] = run_rounds([spec], options, measure, seed=1, finished=lambda r: None, reference=lambda: 1.0,
                          probe=lambda: 50)
    medians = [plan.probe_median_ns for plan in plans]
    if not retake:
        assert medians == [None, None, None]
        assert (result.probe_ns, result.retaken) == ((), ())
        return
    # Round 0: the parent's reading; round 1: the first worker's figure; round 2: also the retake's and round 1's.
    assert medians == [50.0, 1_000.0, 2_000.0]
    assert result.probe_ns == (1_000.0, 2_000.0, 3_000.0)
    assert [retake.round for retake in result.retaken] == [1]
