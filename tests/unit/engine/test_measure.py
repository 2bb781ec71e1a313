"""The engine driven by a fake clock: calibration, sampling and checks, exactly."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from pathlib import Path

import pytest

from stratabench.datasets.verify import Integrity
from stratabench.engine.clock import FakeClock, LoopTimer
from stratabench.engine.measure import (
    calibrate,
    later_warmup_loops,
    loop_timer,
    measure_operation,
    memory_pass,
    statement_timer,
)
from stratabench.engine.sampling import RoundPlan
from stratabench.engine.operation import Operation
from stratabench.options import EngineOptions


def costing(clock: FakeClock, wall_ns: int, cpu_ns: int | None = None, *, first_ns: int | None = None) -> Operation:
    """An operation of ``wall_ns`` (``cpu_ns`` of CPU); its first call costs ``first_ns`` instead, all CPU, if given."""
    calls = []

    def call() -> list[int]:
        if first_ns is not None and not calls:
            clock.advance(first_ns, first_ns)
        else:
            clock.advance(wall_ns, cpu_ns)
        calls.append(1)
        return calls

    return Operation(call=call, trace_memory=False)


def recording(timed: LoopTimer, timed_loops: list[int]) -> LoopTimer:
    """``timed``, appending each loop count it is given to ``timed_loops``."""

    def record(loops: int) -> tuple[int, int]:
        timed_loops.append(loops)
        return timed(loops)

    return record


def test_calibration_reaches_the_minimum_sample_time() -> None:
    clock = FakeClock()
    op = costing(clock, 1_000)
    # 1 loop = 1 µs, short by 100× → ×10 per step, capped: 1 → 10 → 100.
    assert calibrate(loop_timer(op.call, clock.clock), 100_000) == 100


def test_calibration_grows_by_the_measured_shortfall() -> None:
    clock = FakeClock()
    op = costing(clock, 40_000)
    # 40 µs against 100 µs: 1 loop × 2.5·1.05, rounded up → 3 loops = 120 µs.
    assert calibrate(loop_timer(op.call, clock.clock), 100_000) == 3


@pytest.mark.parametrize(("operation_ns", "loops"), [
    # 3 µs against 100 µs: 1 → 10 (capped ×10) = 30 µs, short by 3.33×: 10 × 3.33·1.05 → 35 loops = 105 µs; a growth
    # factor rounded up to a whole number (×4) made 40 loops, 120 µs, in every sample of every round.
    (3_000, 35),
    # 6 µs: 1 → 10 = 60 µs, short by 1.67×: 10 × 1.67·1.05 → 18 loops = 108 µs, not 20 (×2 at least).
    (6_000, 18),
])
def test_calibration_scales_the_loop_by_its_shortfall_not_a_whole_growth_factor(operation_ns: int, loops: int) -> None:
    clock = FakeClock()
    assert calibrate(loop_timer(costing(clock, operation_ns).call, clock.clock), 100_000) == loops


def test_slow_operation_runs_once_per_sample() -> None:
    clock = FakeClock()
    op = costing(clock, 500_000_000)
    assert calibrate(loop_timer(op.call, clock.clock), 100_000_000) == 1


def descheduled_once(clock: FakeClock, wall_ns: int, pause_ns: int) -> Operation:
    """An operation of ``wall_ns`` (all CPU) whose first call the host pauses for ``pause_ns`` (wall only)."""
    calls = []

    def call() -> list[int]:
        clock.advance(wall_ns + (0 if calls else pause_ns), wall_ns)
        calls.append(1)
        return calls

    return Operation(call=call, trace_memory=False)


@pytest.mark.parametrize("on_cpu", [True, False])
def test_a_descheduled_calibration_step_does_not_fix_a_loop_of_one(on_cpu: bool) -> None:
    # 1 µs operations, 100 µs samples; the first step (one call) is paused for 200 µs: on its wall time alone the
    # calibration stopped at one loop, which every round of the run would then time.
    clock = FakeClock()
    op = descheduled_once(clock, 1_000, 200_000)
    assert calibrate(loop_timer(op.call, clock.clock), 100_000, on_cpu=on_cpu) == 100


def test_a_cold_first_call_that_reaches_the_length_on_cpu_does_not_fix_a_loop_of_one() -> None:
    # 3 ms operations, 30 ms samples, judged on CPU time; the first call costs 40 ms of CPU (a thread pool's start,
    # a library's first use): stopped there, every round would time one 3 ms call.
    clock = FakeClock()
    timed_loops: list[int] = []
    timed = recording(loop_timer(costing(clock, 3_000_000, first_ns=40_000_000).call, clock.clock), timed_loops)
    assert calibrate(timed, 30_000_000, on_cpu=True) == 10
    assert timed_loops == [1, 1, 10]  # the first call timed again, warm: 3 ms, so ten calls reach 30 ms


def test_an_operation_that_reaches_the_length_on_cpu_in_every_call_runs_once_per_sample_after_a_second_look() -> None:
    clock = FakeClock()
    timed_loops: list[int] = []
    timed = recording(loop_timer(costing(clock, 50_000_000).call, clock.clock), timed_loops)
    assert calibrate(timed, 30_000_000, on_cpu=True) == 1
    assert timed_loops == [1, 1]


def test_a_wall_timed_step_that_reaches_the_length_twice_stops_the_calibration() -> None:
    # An operation that waits: 50 µs of wall time, 1 µs of CPU. On CPU time alone it would grow without bound.
    clock = FakeClock()
    timed_loops: list[int] = []
    timed = recording(loop_timer(costing(clock, 50_000, cpu_ns=1_000).call, clock.clock), timed_loops)
    assert calibrate(timed, 100_000, on_cpu=True) == 10
    assert timed_loops == [1, 10, 10]


def test_a_cell_s_loop_count_survives_a_descheduled_calibration() -> None:
    # The same pause inside a whole measurement: every sample times 100 operations, not one.
    for waits in (False, True):
        clock = FakeClock()
        op = descheduled_once(clock, 1_000, 200_000)
        op.waits = waits
        measurement = measure_operation(op, EngineOptions(samples=3, min_sample_ns=100_000, memory_samples=0),
                                        clock.clock)
        assert measurement.loops == 100
        assert measurement.samples["wall_ns"] == [1000.0] * 3


def test_samples_are_per_operation() -> None:
    clock = FakeClock()
    op = costing(clock, 1_000, cpu_ns=600)
    options = EngineOptions(samples=7, warmups=2, min_sample_ns=100_000, memory_samples=0)
    measurement = measure_operation(op, options, clock.clock)
    assert measurement.loops == 100
    assert measurement.samples["wall_ns"] == [1000.0] * 7
    assert measurement.samples["cpu_ns"] == [600.0] * 7
    assert "server_cpu_ns" not in measurement.samples  # unknown server: not measured, never 0


def test_calibration_last_run_is_the_first_warm_up() -> None:
    # 1,000 ns operations, 100 µs samples: calibration runs 1, 10 and then 100
    # loops (the run that reaches the sample length, at the final loop count).
    for warmups, extra_loops in ((0, 0), (1, 0), (2, 100)):
        clock = FakeClock()
        op = costing(clock, 1_000)
        calls: list[int] = []
        inner = op.call
        op.call = lambda: (calls.append(1), inner())[1]
        options = EngineOptions(samples=3, warmups=warmups, min_sample_ns=100_000, memory_samples=0)
        measurement = measure_operation(op, options, clock.clock)
        assert measurement.loops == 100
        calibration = 1 + 10 + 100
        assert len(calls) == calibration + extra_loops + 3 * 100


def test_a_later_round_warms_up_on_a_third_of_its_loop() -> None:
    # The first round calibrates (1, 10, then 100 operations, the last its warm-up) and samples once; a later one
    # times the first round's 100 after a warm-up of 34, not 100.
    for plan, warm_up in ((RoundPlan(0, None, 1, True), 1 + 10 + 100), (RoundPlan(3, 100, 1, False), 34)):
        clock = FakeClock()
        op = costing(clock, 1_000)
        calls: list[int] = []
        inner = op.call
        op.call = lambda: (calls.append(1), inner())[1]
        options = EngineOptions(warmups=1, min_sample_ns=100_000, memory_samples=0)
        measurement = measure_operation(op, options, clock.clock, plan)
        assert measurement.loops == 100
        assert len(calls) == warm_up + 100
    assert [later_warmup_loops(loops) for loops in (1, 2, 3, 4, 300)] == [1, 1, 1, 2, 100]


def test_sampling_stops_at_the_time_budget_after_three_samples() -> None:
    clock = FakeClock()
    op = costing(clock, 2_000_000_000)
    options = EngineOptions(samples=10, warmups=0, min_sample_ns=1, max_sample_ns=1_000_000_000, memory_samples=0)
    assert len(measure_operation(op, options, clock.clock).samples["wall_ns"]) == 3


def test_before_each_forces_one_operation_per_sample() -> None:
    clock = FakeClock()
    op = costing(clock, 10)
    resets: list[int] = []
    op.before_each = lambda: resets.append(1)
    options = EngineOptions(samples=4, warmups=1, min_sample_ns=1_000_000, memory_samples=0)
    measurement = measure_operation(op, options, clock.clock)
    assert measurement.loops == 1
    assert len(resets) == 1 + 4  # the warm-up and each sample


def test_before_sample_runs_untimed_before_each_sample_and_leaves_the_loop_as_calibrated() -> None:
    clock = FakeClock()
    op = costing(clock, 1_000)
    events: list[str] = []
    inner = op.call
    op.call = lambda: (events.append("call"), inner())[1]

    def upkeep() -> None:
        events.append("upkeep")
        clock.advance(5_000_000)  # a checkpoint's 5 ms: in the samples' figures if it were timed

    op.before_sample = upkeep
    options = EngineOptions(samples=3, warmups=1, min_sample_ns=100_000, memory_samples=0)
    measurement = measure_operation(op, options, clock.clock)
    assert measurement.loops == 100
    assert measurement.samples["wall_ns"] == [1000.0] * 3
    # The calibration's 1 + 10 + 100 calls (its last the warm-up), then each sample: the upkeep, then its loop.
    assert events == ["call"] * 111 + (["upkeep"] + ["call"] * 100) * 3


def test_before_sample_runs_again_before_a_retaken_sample() -> None:
    clock = FakeClock()
    op = costing(clock, 1_000)
    upkeeps: list[int] = []
    op.before_sample = lambda: upkeeps.append(clock.now_ns)
    # The first sample's probes read 3x the median: it is set aside and retaken once they read normal.
    readings = iter([100, 300, 100, 100, 100, 105])
    measurement = measure_operation(op, EngineOptions(warmups=0, min_sample_ns=0, memory_samples=0), clock.clock,
                                    RoundPlan(4, 5, 1, False, 100), probe_work=lambda: clock.advance(next(readings)))
    assert len(measurement.retaken) == 1 and measurement.samples["wall_ns"] == [1000.0]
    assert len(upkeeps) == 2


def test_verify_runs_once_outside_timing_and_reports_mismatch() -> None:
    clock = FakeClock()
    op = costing(clock, 1_000)
    seen: list[object] = []

    def verify(result: object) -> Integrity:
        seen.append(result)
        return Integrity("aaaa", "bbbb", "record 3 field 'float': expected 1, got 2")

    op.verify = verify
    measurement = measure_operation(op, EngineOptions(samples=3, min_sample_ns=1, memory_samples=0), clock.clock)
    assert len(seen) == 1
    assert measurement.integrity is not None and not measurement.integrity.ok


def test_memory_pass_sees_what_the_result_holds() -> None:
    op = Operation(call=lambda: [bytes(1000) for _ in range(100)])
    measurement = measure_operation(op, EngineOptions(samples=3, min_sample_ns=1, memory_samples=2))
    assert len(measurement.samples["retained_bytes"]) == 2
    assert measurement.samples["retained_bytes"][0] >= 100_000
    assert measurement.samples["alloc_bytes"][0] >= measurement.samples["retained_bytes"][0]
    assert measurement.samples["allocs"][0] >= 1  # the list's own block, at least


def test_memory_pass_collects_the_call_garbage_and_leaves_nothing_frozen() -> None:
    class Cycle:
        def __init__(self) -> None:
            self.me = self

    made: list[weakref.ref[Cycle]] = []

    def call() -> list[int]:
        made.append(weakref.ref(Cycle()))  # garbage only a collection frees
        return [1]

    memory_pass(call)
    assert len(made) == 1 and all(ref() is None for ref in made)
    assert gc.get_freeze_count() == 0  # a run of many cells in one process would otherwise never free them


def test_size_and_extra_metrics_are_recorded() -> None:
    clock = FakeClock()
    op = costing(clock, 1_000)
    op.size_bytes = 123
    op.extra = {"compile_ns": 5e9}
    samples = measure_operation(op, EngineOptions(samples=1, min_sample_ns=1, memory_samples=0), clock.clock).samples
    assert samples["size_bytes"] == [123.0] and samples["compile_ns"] == [5e9]


def test_statement_is_inlined_with_setup_locals() -> None:
    clock = FakeClock()
    namespace = {"tick": clock.advance}
    timed = statement_timer("tick(step)", "step = 250", namespace, clock.clock)
    assert timed(4) == (1000, 1000)


def test_options_refuse_nonsense() -> None:
    from stratabench.errors import UsageError

    with pytest.raises(UsageError, match="--samples"):
        EngineOptions(samples=0)


def test_an_operations_own_engine_options_replace_the_runs() -> None:
    clock = FakeClock()
    op = costing(clock, 1_000)
    op.engine = EngineOptions(samples=2, warmups=0, min_sample_ns=10_000, memory_samples=0)
    measurement = measure_operation(op, EngineOptions(samples=7, min_sample_ns=100_000, memory_samples=0), clock.clock)
    assert measurement.loops == 10 and len(measurement.samples["wall_ns"]) == 2


def test_process_cpu_of_a_live_process_grows_and_a_gone_one_is_unknown() -> None:
    import os

    from stratabench.engine.measure import process_cpu_ns

    before = process_cpu_ns((os.getpid(),))
    sum(range(2_000_000))
    after = process_cpu_ns((os.getpid(),))
    assert before is not None and after is not None and after > before
    assert process_cpu_ns((2**22 + 12345,)) is None  # above the default pid_max: never a live process
    assert process_cpu_ns(()) is None


def test_one_result_builder_for_cells_and_the_api() -> None:
    from stratabench.engine.measure import Measurement
    from stratabench.engine.operation import CellSpec

    spec = CellSpec("api", "f", {"size": 3})
    good = Measurement(loops=7, samples={"wall_ns": [1.0, 2.0, 3.0], "cpu_ns": []}, integrity=Integrity("a", "a"))
    result = good.result(spec, notes={"level": 6}, duration_s=0.5)
    assert (result.suite, result.cell, dict(result.params), result.status, result.error) == ("api", "f", {"size": 3}, "ok", None)
    assert set(result.metrics) == {"wall_ns"} and result.loops == 7 and dict(result.notes) == {"level": 6}
    bad = Measurement(loops=1, samples={"wall_ns": [1.0]}, integrity=Integrity("a", "b")).result(spec)
    assert bad.status == "failed" and bad.error == "integrity: hash b != a"
    detailed = Measurement(loops=1, integrity=Integrity("a", "b", "record 2, field name")).result(spec)
    assert detailed.error == "integrity: record 2, field name"


def test_a_heap_frozen_for_children_stays_frozen_after_a_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    import stratabench.engine.measure as measure_module

    freeze = []
    monkeypatch.setattr(gc, "freeze", lambda: freeze.append("freeze"))
    monkeypatch.setattr(gc, "unfreeze", lambda: freeze.append("unfreeze"))
    monkeypatch.setattr(measure_module, "_frozen", False)
    measure_module.freeze_for_children()  # the zygote's
    with measure_module.frozen_heap():
        pass
    assert freeze == ["freeze", "freeze"]  # never unfrozen: the zygote's imports stay out of the cell's collections
    monkeypatch.setattr(measure_module, "_frozen", False)
    with measure_module.frozen_heap():
        pass
    assert freeze[-2:] == ["freeze", "unfreeze"]


def test_the_memory_pass_counts_the_operations_syscalls(tmp_path: Path) -> None:
    import os

    path = tmp_path / "data"
    path.write_bytes(b"x" * 10)
    fd = os.open(path, os.O_RDONLY)
    try:
        reading, _ = memory_pass(lambda: os.pread(fd, 10, 0))
        idle, _ = memory_pass(lambda: None)
    finally:
        os.close(fd)
    assert reading["syscalls"] == 1 and idle["syscalls"] == 0


def test_the_memory_pass_counts_only_the_calling_thread_s_syscalls(tmp_path: Path) -> None:
    # The ndb client's gRPC threads read their sockets whenever they run: counted process-wide, a cell that
    # waits on them moved 0 -> 1 syscall between two runs of identical code. A thread reading beside an
    # operation that lets it run (a sleep releases the GIL) must not count.
    import os
    import threading
    import time

    path = tmp_path / "data"
    path.write_bytes(b"x" * 10)
    fd = os.open(path, os.O_RDONLY)
    stop = threading.Event()
    reads = [0]

    def reader() -> None:
        while not stop.is_set():
            os.pread(fd, 10, 0)
            reads[0] += 1

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        before = reads[0]
        waiting, _ = memory_pass(lambda: time.sleep(0.05))
        during = reads[0] - before
    finally:
        stop.set()
        thread.join()
        os.close(fd)
    assert during > 0, "the reader never ran inside the pass: the test proves nothing"
    assert waiting["syscalls"] == 0


def test_costly_extra_metrics_are_taken_once_in_a_cell_s_first_round_only() -> None:
    from stratabench.engine.sampling import RoundPlan

    clock = FakeClock()
    calls: list[int] = []

    def sizes() -> dict[str, float]:
        calls.append(1)
        return {"size_zstd_bytes": 10.0}

    op = Operation(call=lambda: clock.advance(1_000), extra_of=sizes, trace_memory=False)
    options = EngineOptions(warmups=0, min_sample_ns=1_000, memory_samples=0)
    first = measure_operation(op, options, clock.clock, RoundPlan(0, None, 1, True))
    later = measure_operation(op, options, clock.clock, RoundPlan(1, first.loops, 1, False))
    assert first.samples["size_zstd_bytes"] == [10.0] and "size_zstd_bytes" not in later.samples
    assert calls == [1]


@pytest.mark.parametrize("in_child", [False, True])
def test_the_memory_pass_follows_a_fixed_number_of_calls_whatever_the_calibration(tmp_path: Path, in_child: bool,
                                                                                  alone: None) -> None:
    # An operation that asks the system for something every second call only (as a store
    # flushes every so many writes): its counted syscalls depend on how many calls came before
    # the pass. Two costs calibrate to 100 and 3 loops; the pass must count the same either way.
    import os

    from stratabench.engine.measure import MEMORY_PASS_AFTER
    from stratabench.engine.sampling import RoundPlan

    path = tmp_path / "data"
    path.write_bytes(b"x" * 10)
    fd = os.open(path, os.O_RDONLY)
    counted = []
    try:
        for wall_ns, loops in ((1_000, 100), (40_000, 3)):
            clock = FakeClock()
            calls: list[int] = []

            def call(cost: int = wall_ns) -> None:
                clock.advance(cost)
                calls.append(1)
                if len(calls) % 2 == 0:
                    os.pread(fd, 10, 0)

            op = Operation(call=call, memory_in_child=in_child)
            options = EngineOptions(warmups=0, min_sample_ns=100_000, memory_samples=1)
            for plan in (None, RoundPlan(0, None, 3, True)):
                measurement = measure_operation(op, options, clock.clock, plan)
                assert measurement.loops == loops
                counted.append(measurement.samples["syscalls"])
                calls.clear()
    finally:
        os.close(fd)
    # The pass is call MEMORY_PASS_AFTER + 1, an even call: one read, in every measurement.
    assert MEMORY_PASS_AFTER == 1 and counted == [[1.0]] * 4


@pytest.fixture
def alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test process taken as running one thread: earlier tests may leave threads behind, which keep the pass home."""
    import stratabench.engine.measure as measure_module

    monkeypatch.setattr(measure_module, "single_threaded", lambda: True)


def _allocating(clock: FakeClock, verified: list[object]) -> Operation:
    """An operation of 1 µs that keeps 100 kB alive in its result; its verdict is always a mismatch."""
    def call() -> list[bytes]:
        clock.advance(1_000)
        return [bytes(1000) for _ in range(100)]

    def verify(result: object) -> Integrity:
        verified.append(result)
        return Integrity("expected", "actual")

    return Operation(call=call, verify=verify)


def test_a_memory_pass_in_a_child_counts_what_one_in_the_worker_counts(alone: None) -> None:
    options = EngineOptions(samples=1, warmups=0, min_sample_ns=1_000, memory_samples=2)
    memory = ("alloc_bytes", "retained_bytes", "allocs", "syscalls")
    figures: dict[bool, list[list[list[float]]]] = {}
    for in_child in (False, True, False, True):
        clock = FakeClock()
        op = _allocating(clock, [])
        op.memory_in_child = in_child
        measurement = measure_operation(op, options, clock.clock, RoundPlan(0, None, 1, True))
        figures.setdefault(in_child, []).append([measurement.samples[name] for name in memory])
        assert measurement.integrity == Integrity("expected", "actual")
    assert figures[False][0] == figures[False][1] == figures[True][0] == figures[True][1]
    assert figures[True][0][1][0] >= 100_000  # the kept bytes: the figures are the operation's, not empty


def test_with_the_memory_pass_in_a_child_the_worker_never_traces_nor_verifies(monkeypatch: pytest.MonkeyPatch,
                                                                             tmp_path: Path, alone: None) -> None:
    import os
    import tracemalloc

    started = tmp_path / "started"
    start = tracemalloc.start

    def recording_start(*frames: int) -> None:
        with started.open("a") as file:  # a file: the child's own copy of a list would die with it
            file.write(f"{os.getpid()}\n")
        start(*frames)

    monkeypatch.setattr(tracemalloc, "start", recording_start)
    verified: list[object] = []
    clock = FakeClock()
    op = _allocating(clock, verified)
    op.memory_in_child = True
    measurement = measure_operation(op, EngineOptions(samples=2, warmups=0, min_sample_ns=1_000, memory_samples=2),
                                    clock.clock, RoundPlan(0, None, 2, True))
    tracers = started.read_text().split()
    assert len(tracers) == 2 and len(set(tracers)) == 1 and tracers[0] != str(os.getpid())
    assert verified == []  # verified in the child, on the pass's result
    assert measurement.integrity == Integrity("expected", "actual")
    assert len(measurement.samples["retained_bytes"]) == 2 and len(measurement.samples["thread_cpu_ns"]) == 2
    later = measure_operation(op, EngineOptions(samples=2, warmups=0, min_sample_ns=1_000, memory_samples=2),
                              clock.clock, RoundPlan(1, measurement.loops, 2, False))
    assert "retained_bytes" not in later.samples and len(started.read_text().split()) == 2  # no pass, no child


def test_what_the_operation_raises_in_the_memory_pass_s_child_the_worker_raises(alone: None) -> None:
    class Refused(Exception):
        def __init__(self, code: int, why: str) -> None:  # pickles, but does not load again
            super().__init__(f"{code}: {why}")

    def refuse() -> None:
        raise Refused(7, "no")

    def on_the_second_call(fail: Callable[[], object]) -> Callable[[], object]:
        # The first call is the calibration's first step, in the worker; the second, traced, in the child.
        calls: list[int] = []

        def call() -> object:
            calls.append(1)
            return fail() if len(calls) == 2 else None

        return call

    for fail, raised, message in ((lambda: int("x"), ValueError, "invalid literal"),
                                  (refuse, RuntimeError, "the memory pass raised Refused")):
        op = Operation(call=on_the_second_call(fail), memory_in_child=True)
        with pytest.raises(raised, match=message):
            measure_operation(op, EngineOptions(samples=1, min_sample_ns=1, memory_samples=1), FakeClock().clock)


def test_a_memory_pass_child_that_dies_twice_fails_the_cell_with_its_signal(tmp_path: Path, alone: None) -> None:
    import os
    import signal

    children = tmp_path / "children"
    worker = os.getpid()

    def die() -> None:
        if os.getpid() == worker:
            return  # the calibration's first step, in the worker: the pass's call before it
        with children.open("a") as file:
            file.write("x")
        os.kill(os.getpid(), signal.SIGKILL)

    op = Operation(call=die, memory_in_child=True)
    with pytest.raises(RuntimeError, match=r"without its figures \(exit -9\)"):
        measure_operation(op, EngineOptions(samples=1, min_sample_ns=1, memory_samples=1), FakeClock().clock)
    assert children.read_text() == "xx"  # a second child was tried, no third


def test_a_memory_pass_child_that_dies_once_is_retried_with_a_note(tmp_path: Path, alone: None) -> None:
    import faulthandler
    import os
    import signal

    crashed = tmp_path / "crashed"
    clock = FakeClock()
    worker = os.getpid()

    def crash_once() -> list[bytes]:
        if os.getpid() != worker and not crashed.exists():  # the first child: a file, since its memory dies with it
            crashed.touch()
            faulthandler.disable()  # pytest's handler would print a fatal error for this intended crash
            os.kill(os.getpid(), signal.SIGSEGV)
        clock.advance(1_000)
        return [bytes(1000) for _ in range(100)]

    op = Operation(call=crash_once, memory_in_child=True)
    measurement = measure_operation(op, EngineOptions(samples=1, warmups=0, min_sample_ns=1_000, memory_samples=1),
                                    clock.clock, RoundPlan(0, None, 1, True))
    assert measurement.samples["retained_bytes"][0] >= 100_000  # the second child's figures
    assert "exit -11" in op.notes["memory_pass_retried"] and "gh-128679" in op.notes["memory_pass_retried"]


def test_a_worker_with_other_threads_traces_in_itself_not_in_a_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import threading
    import tracemalloc

    tracers: list[int] = []
    start = tracemalloc.start

    def recording_start(*frames: int) -> None:
        tracers.append(os.getpid())  # seen here only when the pass runs in this process
        start(*frames)

    monkeypatch.setattr(tracemalloc, "start", recording_start)
    clock = FakeClock()
    op = _allocating(clock, [])
    op.memory_in_child = True
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        measurement = measure_operation(op, EngineOptions(samples=1, warmups=0, min_sample_ns=1_000, memory_samples=1),
                                        clock.clock, RoundPlan(0, None, 1, True))
    finally:
        release.set()
        other.join()
    assert tracers == [os.getpid()] and measurement.samples["retained_bytes"][0] >= 100_000


def _passes_allocs(call: object, passes: int) -> list[float]:
    """``allocs`` of ``passes`` memory passes of ``call`` in this process, one after the other."""
    return [memory_pass(call)[0]["allocs"] for _ in range(passes)]  # type: ignore[arg-type]


def test_a_thread_allocating_beside_the_memory_pass_does_not_move_its_count() -> None:
    import threading
    import time

    kept: list[list[int]] = []
    stop = threading.Event()

    def allocating() -> None:
        # A thread that wakes often and keeps what it makes, as a client library's poller might: today each of its
        # turns inside the pass's window (every switch interval, 5 ms) added its blocks to the pass's count.
        while not stop.is_set():
            kept.extend([index] for index in range(200))
            time.sleep(0.0002)

    def call() -> list[int]:
        total = 0
        for index in range(300_000):  # pure Python, about 30 ms: several of the other thread's turns
            total += index
        return [total]

    other = threading.Thread(target=allocating, daemon=True)
    other.start()
    try:
        counts = _passes_allocs(call, 4)
    finally:
        stop.set()
        other.join()
    assert len(kept) > 0
    assert len(set(counts)) == 1, counts


def test_names_the_interpreter_caches_during_the_pass_do_not_move_its_count() -> None:
    import calendar
    import datetime

    # An aware datetime's timetuple() looks its zone's dst up by a name made afresh each time; CPython 3.11's type
    # cache keeps the name in a slot chosen by its address, so how many stay depended on where they were allocated:
    # entities encode mixed/100 model datastore.to_message counted 76 to 141 blocks in runs of identical code.
    moments = [datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=7 * index)
               for index in range(2_000)]

    def call() -> int:
        return sum(calendar.timegm(moment.timetuple()) for moment in moments)

    counts = _passes_allocs(call, 4)
    assert len(set(counts)) == 1, counts


def test_a_pass_in_a_child_follows_the_calibration_s_first_step_and_makes_one_call(tmp_path: Path,
                                                                                   alone: None) -> None:
    import os

    # The pass's one call before it is the calibration's first step, made in the worker: the child inherits it and
    # makes only the traced call, so a cell's first round makes one operation fewer than with the call in the child.
    calls = tmp_path / "calls"
    clock = FakeClock()
    made: list[int] = []

    def call() -> list[bytes]:
        made.append(1)
        with calls.open("a") as file:
            file.write(f"{os.getpid()} {len(made)}\n")
        clock.advance(40_000)
        return [bytes(1000) for _ in range(100)]

    op = Operation(call=call, memory_in_child=True)
    measurement = measure_operation(op, EngineOptions(samples=1, warmups=0, min_sample_ns=100_000, memory_samples=1),
                                    clock.clock, RoundPlan(0, None, 1, True))
    lines = [line.split() for line in calls.read_text().splitlines()]
    in_child = [count for pid, count in lines if pid != str(os.getpid())]
    assert lines[0] == [str(os.getpid()), "1"] and in_child == ["2"]
    assert measurement.loops == 3 and measurement.samples["retained_bytes"][0] >= 100_000
