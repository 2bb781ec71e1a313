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
    assert slice_rounds(4, 2) == [0, 0, 1, 1]


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
