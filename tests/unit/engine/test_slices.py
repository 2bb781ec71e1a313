"""Slices: an external suite's repetitions taken between the Python rounds and merged into one result per cell."""

from __future__ import annotations

import io
import json
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from stratabench.cli.progress import QuietProgress
from stratabench.engine.operation import CellSpec
from stratabench.engine.runner import Plan, execute
from stratabench.engine.slices import SlicedRun, merge_slices, slice_rounds, slices_back_to_back
from stratabench.errors import StratabenchError, UnavailableError
from stratabench.options import EngineOptions, RunOptions
from stratabench.results.format import cell_from_json, cell_to_json
from stratabench.results.records import CellResult, MetricResult


def external(name: str, suite: str = "fake") -> CellSpec:
    return CellSpec(suite, name, {}, "service")


class FakeSession:
    """Slice ``i`` measures every cell once at ``values[cell][i]`` (None: that cell's slice fails)."""

    def __init__(self, cells: Sequence[CellSpec], values: Mapping[str, Sequence[float | None]], log: list[str],
                 broken: int | None = None) -> None:
        self.cells, self.values, self.log, self.broken = cells, values, log, broken
        self.closed = False

    @property
    def count(self) -> int:
        return max(len(values) for values in self.values.values())

    def run(self, index: int) -> Iterator[CellResult]:
        self.log.append(f"{self.cells[0].suite} slice {index}")
        for cell in self.cells:
            if index == self.broken:
                raise StratabenchError(f"the worker died in slice {index + 1}")
            values = self.values[cell.name]
            if index >= len(values):
                continue  # measured in fewer slices (one that cannot be cut)
            value = values[index]
            if value is None:
                yield CellResult.failure(cell, "failed", "wrong answer", duration_s=1.0)
            else:
                yield CellResult(cell.suite, cell.name, {}, cell.language, "ok", loops=1, duration_s=1.0,
                                 metrics={"wall_ns": MetricResult.of([value]), "sql_statements": MetricResult.of([7.0])},
                                 notes={"slice": index}, judged="wall_ns")

    def notes(self, cell: CellSpec, parts: Sequence[CellResult]) -> Mapping[str, Any]:
        return {"runs": len(parts)}

    def close(self) -> None:
        self.closed = True


class FakeRunner:
    def __init__(self, values: Mapping[str, Sequence[float | None]], log: list[str], broken: int | None = None) -> None:
        self.values, self.log, self.broken = values, log, broken
        self.session: FakeSession | None = None

    def run_external(self, cells: Sequence[CellSpec], workdir: Path) -> Iterator[CellResult]:
        raise AssertionError("a sliced suite is never run whole")

    def slices(self, cells: Sequence[CellSpec], workdir: Path) -> FakeSession:
        assert workdir.is_dir()
        self.session = FakeSession(cells, self.values, self.log, self.broken)
        return self.session


def sliced_run(runner: FakeRunner, cells: Sequence[CellSpec], tmp_path: Path,
               floor: int = 6) -> tuple[SlicedRun, list[CellResult]]:
    written: list[CellResult] = []
    run = SlicedRun(floor, written.append)
    run.open(runner, cells, tmp_path)
    return run, written


def test_slices_spread_over_the_floor_of_rounds() -> None:
    assert slice_rounds(3, 6) == [1, 3, 5]
    assert slice_rounds(1, 6) == [5]
    assert slice_rounds(6, 6) == [0, 1, 2, 3, 4, 5]
    # More slices than rounds never share one (they would make one value): the rest follow the later rounds.
    assert slice_rounds(4, 2) == [0, 1, 2, 3]
    assert slice_rounds(9, 6) == list(range(9))


def test_nine_slices_over_six_rounds_give_a_cell_nine_values(tmp_path: Path) -> None:
    # Nine slices, six rounds every Python cell takes and one more some take: the seventh slice follows round 6,
    # the last two come after the rounds, each its own label, so the cell's interval has nine values and drops
    # the far one at each end (engine/sampling.py). Sharing rounds made six values of nine slices.
    log: list[str] = []
    values = [100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 200.0]
    runner = FakeRunner({"a": values}, log)
    run, written = sliced_run(runner, [external("a")], tmp_path)
    for number in range(7):
        log.append(f"round {number}")
        run.after_round(number)
    run.finish(7)
    assert log == ["round 0", "fake slice 0", "round 1", "fake slice 1", "round 2", "fake slice 2", "round 3",
                   "fake slice 3", "round 4", "fake slice 4", "round 5", "fake slice 5", "round 6", "fake slice 6",
                   "fake slice 7", "fake slice 8"]
    [a] = written
    assert a.metrics["wall_ns"].rounds == (0, 1, 2, 3, 4, 5, 6, 7, 8)
    summary = a.metrics["wall_ns"].summary
    assert (summary.n, summary.median, summary.ci_low, summary.ci_high) == (9, 104.0, 101.0, 107.0)


def test_each_slice_follows_its_round_and_the_cell_is_written_merged_after_the_last(tmp_path: Path) -> None:
    log: list[str] = []
    runner = FakeRunner({"a": [100.0, 130.0, 110.0], "b": [10.0, 10.0, 10.0]}, log)
    run, written = sliced_run(runner, [external("a"), external("b")], tmp_path)
    for number in range(6):
        log.append(f"round {number}")
        run.after_round(number)
        if number < 5:
            assert written == []  # a cell is written once its suite's last slice is in
    assert log == ["round 0", "round 1", "fake slice 0", "round 2", "round 3", "fake slice 1", "round 4", "round 5",
                   "fake slice 2"]
    a, b = written
    assert a.ok and a.metrics["wall_ns"].rounds == (1, 3, 5)
    assert a.metrics["wall_ns"].samples == (100.0, 130.0, 110.0)
    summary = a.metrics["wall_ns"].summary
    assert (summary.n, summary.median, summary.ci_low, summary.ci_high) == (3, 110.0, 100.0, 130.0)
    assert a.metrics["sql_statements"].samples == (7.0, 7.0, 7.0)  # every metric keeps its rounds
    assert a.flags and "from 3 rounds" in a.flags[0]  # ±13.6%: judged on the per-round values
    assert b.flags == ()
    assert a.notes["runs"] == 3 and a.notes["slice_rounds"] == [1, 3, 5]
    assert a.duration_s == 3.0
    run.finish(6)
    assert runner.session is not None and runner.session.closed
    assert len(written) == 2


def test_a_merged_cell_keeps_its_rounds_through_the_results_format(tmp_path: Path) -> None:
    runner = FakeRunner({"a": [100.0, 130.0, 110.0]}, [])
    run, written = sliced_run(runner, [external("a")], tmp_path)
    run.finish(0)
    [a] = written
    again = cell_from_json(json.loads(json.dumps(cell_to_json(a))))
    assert again.metrics["wall_ns"].rounds == (0, 1, 2) and again.summary("wall_ns") == a.summary("wall_ns")
    assert again.flags == a.flags and again.notes["slice_rounds"] == [0, 1, 2]


def test_a_failed_slice_keeps_the_other_slices_values_and_names_itself(tmp_path: Path) -> None:
    runner = FakeRunner({"a": [100.0, None, 120.0]}, [])
    run, written = sliced_run(runner, [external("a")], tmp_path)
    for number in range(6):
        run.after_round(number)
    [a] = written
    assert a.status == "failed"
    assert a.error == "slice 2 of 3 (after round 3) failed: wrong answer"
    assert a.metrics["wall_ns"].samples == (100.0, 120.0) and a.metrics["wall_ns"].rounds == (1, 5)


def test_a_slice_that_fails_as_a_whole_fails_that_slice_of_every_cell_it_had_not_measured(tmp_path: Path) -> None:
    runner = FakeRunner({"a": [100.0, 100.0, 100.0], "b": [5.0, 5.0, 5.0]}, [], broken=0)
    run, written = sliced_run(runner, [external("a"), external("b")], tmp_path)
    run.finish(0)
    assert [cell.error for cell in written] == ["slice 1 of 3 (after round 0) failed: the worker died in slice 1"] * 2
    assert [cell.metrics["wall_ns"].rounds for cell in written] == [(1, 2), (1, 2)]


def test_back_to_back_takes_every_slice_in_turn_and_fails_the_cells_of_a_session_that_cannot_open(
        tmp_path: Path) -> None:
    log: list[str] = []
    a, b = back_to_back = slices_back_to_back(FakeRunner({"a": [100.0, 130.0, 110.0], "b": [1.0, None, 1.0]}, log),
                                              [external("a"), external("b")], tmp_path)
    assert log == ["fake slice 0", "fake slice 1", "fake slice 2"] and len(back_to_back) == 2
    assert a.ok and a.metrics["wall_ns"].rounds == (0, 1, 2) and a.metrics["wall_ns"].summary.median == 110.0
    assert b.error == "slice 2 of 3 (after round 1) failed: wrong answer" and b.metrics["wall_ns"].rounds == (0, 2)

    class Closed(FakeRunner):
        def slices(self, cells: Sequence[CellSpec], workdir: Path) -> FakeSession:
            raise UnavailableError("no toolchain: install it")

    [c] = slices_back_to_back(Closed({}, []), [external("c")], tmp_path)
    assert (c.status, c.error) == ("unavailable", "no toolchain: install it")


def test_a_cell_measured_in_one_slice_keeps_its_result_as_the_suite_made_it(tmp_path: Path) -> None:
    runner = FakeRunner({"a": [100.0, 100.0, 100.0], "whole": [50.0]}, [])
    run, written = sliced_run(runner, [external("a"), external("whole")], tmp_path)
    run.finish(0)
    whole = next(cell for cell in written if cell.cell == "whole")
    assert whole.metrics["wall_ns"].rounds is None and whole.notes == {"slice": 0}


def test_an_interrupt_writes_every_cell_with_a_slice_merged_and_closes_the_session(tmp_path: Path) -> None:
    runner = FakeRunner({"a": [100.0, 104.0, 102.0]}, [])
    run, written = sliced_run(runner, [external("a")], tmp_path)
    for number in range(4):
        run.after_round(number)
    run.close()
    [a] = written
    assert a.ok and a.metrics["wall_ns"].rounds == (1, 3)
    assert runner.session is not None and runner.session.closed
    run.close()
    assert len(written) == 1  # closing again writes nothing twice


# -- past the floor: only the cells that miss the target, as the run's allowance pays --------------------------

class FakeMoreSession(FakeSession):
    """A :class:`FakeSession` whose floor is ``count`` slices, and which can take slices past it of chosen cells
    (``run_more``: slice ``i`` of a cell gives ``values[cell][i]``), each cell measured moving ``clock`` 1 s on."""

    def __init__(self, cells: Sequence[CellSpec], values: Mapping[str, Sequence[float | None]], log: list[str],
                 broken: int | None, count: int, clock: list[float]) -> None:
        super().__init__(cells, values, log, broken)
        self.floor, self.clock = count, clock
        self.more: list[tuple[int, list[str]]] = []

    @property
    def count(self) -> int:
        return self.floor

    def run(self, index: int) -> Iterator[CellResult]:
        return self.run_more(index, self.cells)

    def run_more(self, index: int, cells: Sequence[CellSpec]) -> Iterator[CellResult]:
        if index >= self.floor:
            self.more.append((index, [cell.name for cell in cells]))
        for result in FakeSession(cells, self.values, self.log, self.broken).run(index):
            self.clock[0] += 1.0
            yield result


class FakeMoreRunner(FakeRunner):
    def __init__(self, values: Mapping[str, Sequence[float | None]], clock: list[float], broken: int | None = None,
                 count: int = 6) -> None:
        super().__init__(values, [], broken)
        self.clock, self.count = clock, count
        self.more: FakeMoreSession | None = None

    def slices(self, cells: Sequence[CellSpec], workdir: Path) -> FakeMoreSession:
        self.more = FakeMoreSession(cells, self.values, self.log, self.broken, self.count, self.clock)
        return self.more


#: Six floor values with one slow (as the machine gives a Go cell), then near the median: nine drop the slow one.
SPIKY = [100.0, 150.0, 100.0, 101.0, 99.0, 100.0, 100.0, 100.0, 102.0, 100.0, 100.0, 100.0]
#: Two slow values at one end of six: nine keep the second (±20%), twelve could drop both.
TWO_SLOW = [100.0, 150.0, 140.0, 100.0, 101.0, 99.0, 100.0, 100.0, 101.0, 100.0, 99.0, 100.0]
STEADY = [100.0, 101.0, 100.0, 100.0, 99.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0]
#: Spread among the middle values: no count up to twelve could meet the target, so it asks for nothing.
SPREAD = [100.0, 115.0, 130.0, 145.0, 85.0, 70.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0]


def more_run(values: Mapping[str, Sequence[float | None]], tmp_path: Path, *, steady: int = 0,
             broken: int | None = None,
             options: EngineOptions | None = None) -> tuple[SlicedRun, list[CellResult], FakeMoreSession]:
    """A run's slices of a session that can take more, with ``steady`` more cells that meet the target at the floor
    (each cell's slice takes 1 s, so the floor's 6 s a cell pay 0.6 s of slices past it)."""
    clock = [0.0]
    values = {**values, **{f"steady {index}": STEADY for index in range(steady)}}
    runner = FakeMoreRunner(values, clock, broken)
    written: list[CellResult] = []
    run = SlicedRun(6, written.append, options=options or EngineOptions(), now=lambda: clock[0])
    run.open(runner, [external(name) for name in values], tmp_path)
    assert runner.more is not None
    return run, written, runner.more


def test_past_the_floor_only_a_cell_that_misses_the_target_takes_more_slices_one_a_round(tmp_path: Path) -> None:
    run, written, session = more_run({"steady": STEADY, "spiky": SPIKY, "spread": SPREAD}, tmp_path, steady=3)
    for number in range(12):
        run.after_round(number)
    # The floor after rounds 0-5, then the spiky cell alone after rounds 6, 7, 8: nine values met the target.
    assert session.more == [(6, ["spiky"]), (7, ["spiky"]), (8, ["spiky"])]
    steady, spiky, spread = written[:3]
    assert steady.metrics["wall_ns"].rounds == (0, 1, 2, 3, 4, 5) and steady.flags == ()
    assert spiky.metrics["wall_ns"].rounds == tuple(range(9)) and spiky.flags == ()  # ranks 2-8 leave out 150
    assert spiky.notes["runs"] == 9 and spiky.notes["slice_rounds"] == list(range(9))
    # Its middle values spread ±10% and more: no count up to twelve could meet the target, so it took none.
    assert spread.metrics["wall_ns"].rounds == (0, 1, 2, 3, 4, 5) and spread.flags


def test_without_rounds_left_the_slices_past_the_floor_follow_each_other_each_its_own_round(tmp_path: Path) -> None:
    run, written, session = more_run({"two slow": TWO_SLOW}, tmp_path, steady=10)
    for number in range(6):
        run.after_round(number)
    assert session.more == [] and written == []  # the floor is in; the cell still going waits for a round
    run.finish(6)
    # Nine could not leave out both slow values: it asked for twelve at once, and met the target there.
    assert [index for index, _ in session.more] == [6, 7, 8, 9, 10, 11]
    two_slow = next(cell for cell in written if cell.cell == "two slow")
    assert two_slow.metrics["wall_ns"].rounds == tuple(range(12)) and two_slow.flags == ()


def test_the_allowance_grants_the_cheapest_asks_first_and_no_more_than_it_holds(tmp_path: Path) -> None:
    # Every cell's visit costs the same (a slice's 1 s a cell): nine rounds cost 3 visits, twelve 6. The floor's
    # slices took 42 s (seven cells): 10% of it pays for the 3 s of nine, not then the 6 s of twelve.
    run, written, session = more_run({"spiky": SPIKY, "two slow": TWO_SLOW}, tmp_path, steady=5)
    run.finish(0)
    assert session.more == [(6, ["spiky"]), (7, ["spiky"]), (8, ["spiky"])]
    spiky, two_slow = written[:2]
    assert spiky.flags == () and two_slow.metrics["wall_ns"].summary.n == 6 and two_slow.flags


def test_a_slice_past_the_floor_that_fails_keeps_the_other_slices_values(tmp_path: Path) -> None:
    values = {"spiky": SPIKY[:6] + [None] + SPIKY[7:], "two slow": TWO_SLOW, "broken": SPIKY}
    run, written, session = more_run(values, tmp_path, steady=20)
    run.finish(0)
    spiky, two_slow, broken = written[:3]
    # Its seventh slice failed: the cell is failed naming it, with its six values, and takes no slice after it.
    assert spiky.status == "failed" and spiky.error == "slice 7 of 7 (after round 6) failed: wrong answer"
    assert spiky.metrics["wall_ns"].rounds == (0, 1, 2, 3, 4, 5)
    assert two_slow.ok and two_slow.metrics["wall_ns"].summary.n == 12  # the other cells go on
    assert broken.ok and broken.metrics["wall_ns"].summary.n == 9
    # A slice past the floor that fails as a whole fails that slice of every cell in it, each keeping the rest.
    run, written, session = more_run({"spiky": SPIKY, "steady": STEADY}, tmp_path, broken=7, steady=5)
    run.finish(0)
    spiky, steady = written[:2]
    assert spiky.error == "slice 8 of 8 (after round 7) failed: the worker died in slice 8"
    assert spiky.metrics["wall_ns"].rounds == (0, 1, 2, 3, 4, 5, 6) and steady.ok


def test_a_fixed_count_or_a_run_without_options_takes_the_floor_only(tmp_path: Path) -> None:
    run, written, session = more_run({"spiky": SPIKY}, tmp_path, steady=5, options=EngineOptions(samples=6))
    run.finish(0)
    assert session.more == [] and written[0].metrics["wall_ns"].summary.n == 6 and written[0].flags
    clock = [0.0]
    plain = SlicedRun(6, written.append, now=lambda: clock[0])
    runner = FakeMoreRunner({"spiky": SPIKY}, clock)
    plain.open(runner, [external("spiky")], tmp_path)
    plain.finish(0)
    assert runner.more is not None and runner.more.more == []


def test_merging_slices_after_one_round_makes_one_value_of_them() -> None:
    spec = external("a")

    def part(value: float) -> CellResult:
        return CellResult("fake", "a", {}, "service", "ok", metrics={"wall_ns": MetricResult.of([value])},
                          judged="wall_ns")

    merged = merge_slices(spec, [(2, part(100.0)), (2, part(120.0)), (4, part(90.0))], lambda cell, parts: {})
    assert merged.metrics["wall_ns"].per_round == {2: 110.0, 4: 90.0}


# -- in a run ------------------------------------------------------------------------------------------------

PROBE = '''
from stratabench.engine.operation import Operation


class Probe:
    def __init__(self, options):
        self.options = options

    def prepare(self, cell, workdir):
        return Operation(call=lambda: None, trace_memory=False)
'''


class Sink:
    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.cells: list[CellResult] = []

    def write(self, result: CellResult) -> None:
        self.cells.append(result)
        self.log.append(f"wrote {result.cell}")

    def write_round(self, record: dict[str, Any]) -> None:
        self.log.append(f"round {record['number']}")


class WholeRunner:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def run_external(self, cells: Sequence[CellSpec], workdir: Path) -> Iterator[CellResult]:
        self.log.append("unsliced suite")
        for cell in cells:
            yield CellResult(cell.suite, cell.name, {}, cell.language, "ok")


def test_a_run_takes_the_slices_between_its_python_rounds_and_unsliced_suites_after(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "slices_probe.py").write_text(textwrap.dedent(PROBE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "slices_probe", raising=False)
    log: list[str] = []
    python = CellSpec("py", "p", {}, "python", {}, "slices_probe:Probe")
    plan = Plan([(FakeRunner({"a": [1.0, 2.0]}, log), [python, external("a")]),
                 (WholeRunner(log), [external("go", "other")])])
    options = RunOptions(engine=EngineOptions(samples=3, warmups=0, min_sample_ns=0, memory_samples=0,
                                              isolate=False, round_seed=1))
    sink = Sink(log)
    results = execute(plan, options, sink, QuietProgress(io.StringIO()))
    # Three rounds (the fixed count): two slices follow rounds 1 and 2.
    assert log == ["round 0", "round 1", "fake slice 0", "round 2", "fake slice 1", "wrote a", "wrote p",
                   "unsliced suite", "wrote go"]
    assert [result.cell for result in results] == ["p", "a", "go"]
    assert next(r for r in results if r.cell == "a").metrics["wall_ns"].rounds == (1, 2)


def test_without_python_rounds_the_suites_slices_alternate_each_its_own_moment(tmp_path: Path) -> None:
    log: list[str] = []
    plan = Plan([(FakeRunner({"a": [1.0, 2.0, 3.0]}, log), [external("a")]),
                 (FakeRunner({"b": [1.0, 2.0]}, log), [external("b", "other")])])
    sink = Sink(log)
    results = execute(plan, RunOptions(engine=EngineOptions(isolate=False)), sink, QuietProgress(io.StringIO()))
    assert log == ["fake slice 0", "other slice 0", "fake slice 1", "other slice 1", "wrote b", "fake slice 2",
                   "wrote a"]
    assert [result.metrics["wall_ns"].rounds for result in results] == [(0, 1, 2), (0, 1)]
