"""``ab``'s rounds: ABBA order, shuffled per round from a seed, and a paired ratio that cancels the machine's drift."""

from __future__ import annotations

import io
import itertools
import os
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from stratabench.cli.progress import QuietProgress
from stratabench.engine.ab import AbCell, ForkedMeasure, Side, run_ab, run_until_sure
from stratabench.engine.operation import CellSpec
from stratabench.engine.sampling import RoundPlan
from stratabench.metrics import metric
from stratabench.options import EngineOptions, RunOptions
from stratabench.report.ab import AbVerdict, ab_summary, ab_table, judge
from stratabench.results.records import CellResult, MetricResult


class Sink:
    def __init__(self) -> None:
        self.results: list[CellResult] = []

    def write(self, result: CellResult) -> None:
        self.results.append(result)


def cells(count: int) -> list[AbCell]:
    specs = [CellSpec("s", f"c{i}") for i in range(count)]
    return [AbCell({"A": spec, "B": spec}) for spec in specs]


SIDES = [Side("A", "a", RunOptions(), sys.executable), Side("B", "b", RunOptions(), sys.executable)]


def visits(planned: list[AbCell], rounds: int, seed: int) -> list[list[tuple[str, str]]]:
    """The (cell, side) visits of each round, as run_ab made them."""
    made: list[list[tuple[str, str]]] = [[] for _ in range(rounds)]

    def measure(spec: CellSpec, side: Side, number: int) -> CellResult:
        made[number].append((spec.name, side.label))
        return CellResult(spec.suite, spec.name, {}, "python", "ok", loops=1, metrics={"wall_ns": MetricResult.of([1.0])})

    run_ab(planned, SIDES, range(rounds), seed, measure, Sink(), QuietProgress(io.StringIO()))
    return made


def test_each_cells_sides_run_back_to_back_a_first_in_even_rounds_b_first_in_odd() -> None:
    for number, order in enumerate(visits(cells(10), 4, seed=7)):
        assert len(order) == 20
        for (first, first_side), (second, second_side) in zip(order[::2], order[1::2]):
            assert first == second
            assert (first_side, second_side) == (("A", "B") if number % 2 == 0 else ("B", "A"))


def test_the_cells_order_is_shuffled_each_round_and_repeats_with_its_seed() -> None:
    names = [[name for name, _ in order[::2]] for order in visits(cells(10), 4, seed=7)]
    assert len({tuple(order) for order in names}) == 4  # a new order every round
    assert names == [[name for name, _ in order[::2]] for order in visits(cells(10), 4, seed=7)]
    assert names != [[name for name, _ in order[::2]] for order in visits(cells(10), 4, seed=8)]


def verdict(cell: AbCell, name: str, min_effect: float = 0.05) -> AbVerdict:
    found = judge(cell.result("A", RunOptions()), cell.result("B", RunOptions()), metric(name), min_effect)
    assert found is not None
    return found


def test_the_paired_ratio_cancels_a_drift_of_the_machine() -> None:
    # The machine slows by 3% at every visit: over 12 rounds of 8 cells it ends 6x slower than it began.
    # B costs 10% more than A in every cell.
    moment = itertools.count()
    cost = {"A": 100.0, "B": 110.0}

    def measure(spec: CellSpec, side: Side, number: int) -> CellResult:
        value = cost[side.label] * 1.03 ** next(moment)
        return CellResult(spec.suite, spec.name, {}, "python", "ok", loops=1,
                          metrics={"wall_ns": MetricResult.of([value])})

    planned = cells(8)
    sink = Sink()
    run_ab(planned, SIDES, range(12), 1, measure, sink, QuietProgress(io.StringIO()))
    assert len(sink.results) == 8 * 2 * 12
    assert {result.notes["ab_side"] for result in sink.results} == {"A", "B"}
    for cell in planned:
        judged = verdict(cell, "wall_ns")
        assert judged.pairs == 12
        assert judged.low <= 1.10 <= judged.high and abs(judged.ratio / 1.10 - 1) < 0.031
        assert judged.verdict == "slower" and judged.worse
        # Unpaired, the two sides' medians are minutes apart: their ratio carries the drift.
        assert abs(judged.b / judged.a / 1.10 - 1) < 0.5


def test_identical_sides_are_unchanged_or_inconclusive_never_a_change() -> None:
    noise = itertools.cycle([1.00, 1.02, 0.99, 1.03, 0.98, 1.01, 0.97])

    def measure(spec: CellSpec, side: Side, number: int) -> CellResult:
        return CellResult(spec.suite, spec.name, {}, "python", "ok", loops=1,
                          metrics={"wall_ns": MetricResult.of([100.0 * next(noise)])})

    planned = cells(20)
    run_ab(planned, SIDES, range(8), 3, measure, Sink(), QuietProgress(io.StringIO()))
    words = {verdict(cell, "wall_ns").verdict for cell in planned}
    assert words <= {"unchanged", "inconclusive"}


def test_counts_are_judged_by_their_tolerance() -> None:
    def result(value: float) -> CellResult:
        return CellResult("s", "c", {}, "python", "ok", loops=1, metrics={"instructions": MetricResult.of([value])})

    assert judge(result(1000), result(1005), metric("instructions"), 0.05).verdict == "unchanged"  # type: ignore[union-attr]
    moved = judge(result(1000), result(1020), metric("instructions"), 0.05)
    assert moved is not None and moved.verdict == "more" and moved.worse and moved.level == 1.0


def test_until_sure_measures_only_inconclusive_cells_again_two_rounds_at_a_time_and_stops_at_its_bound() -> None:
    # B/A per cell: clearly slower, clearly the same, and a spread that never settles (0.97-1.12).
    spread = {"slower": itertools.cycle([1.20, 1.21]), "same": itertools.cycle([1.00, 1.005]),
              "noisy": itertools.cycle([0.97, 1.12, 1.02, 1.08])}

    def measure(spec: CellSpec, side: Side, number: int) -> CellResult:
        value = 100.0 * (next(spread[spec.name]) if side.label == "B" else 1.0)
        return CellResult(spec.suite, spec.name, {}, "python", "ok", loops=1, metrics={"wall_ns": MetricResult.of([value])})

    def unsure(cell: AbCell) -> bool:
        return verdict(cell, "wall_ns").inconclusive

    planned = [AbCell({"A": CellSpec("s", name), "B": CellSpec("s", name)}) for name in spread]
    run_until_sure(planned, SIDES, 6, 5, 1, measure, Sink(), QuietProgress(io.StringIO()), unsure)
    rounds = {cell.spec.name: [number for number, _ in cell.rounds["B"]] for cell in planned}
    assert rounds == {"slower": list(range(6)), "same": list(range(6)), "noisy": list(range(11))}
    assert [verdict(cell, "wall_ns").verdict for cell in planned] == ["slower", "unchanged", "inconclusive"]


PROBE = '''
import os, sys
from pathlib import Path
from stratabench.engine.operation import Operation


class Probe:
    def __init__(self, options):
        self.options = options

    def prepare(self, cell, workdir):
        started = Path(f"/proc/{os.getppid()}/stat").read_text().rsplit(")", 1)[1].split()[19]  # the zygote's start
        return Operation(call=lambda: None, trace_memory=False,
                         notes={"executable": sys.executable, "zygote": [os.getppid(), started]})
'''


def test_each_environment_has_zygotes_of_its_own_new_every_round(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ab_probe.py").write_text(textwrap.dedent(PROBE))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    # Another path to this environment's interpreter (a venv's bin/python3): B's environment, started on its own.
    other = next(path for path in (Path(sys.executable).with_name(name) for name in ("python3", "python3.11", "python"))
                 if path.exists() and str(path) != sys.executable)
    options = RunOptions(engine=EngineOptions(samples=1, warmups=0, min_sample_ns=0, memory_samples=0))
    sides = [Side("A", "a", options, sys.executable), Side("B", "b", options, str(other))]
    spec = CellSpec("probe", "p", {}, "python", {}, "ab_probe:Probe")
    planned = [AbCell({"A": spec, "B": spec})]
    with ForkedMeasure(["ab_probe"]) as measure:
        run_ab(planned, sides, range(3), 0, measure, Sink(), QuietProgress(io.StringIO()))
        # The last round's zygotes, each running its side's interpreter.
        assert {label: zygotes.python for label, zygotes in measure.zygotes.items()} == \
            {"A": sys.executable, "B": str(other)}
    zygote = {label: [tuple(result.notes["zygote"]) for _, result in planned[0].rounds[label]] for label in ("A", "B")}
    # Six zygotes (a process id with its start time: a reused id is another process): one per side and round,
    # each with its own layout and hash seed, none shared.
    assert len(set(zygote["A"] + zygote["B"])) == 6
    assert {result.notes["executable"] for _, result in planned[0].rounds["B"]} == {str(other)}
    assert {result.notes["executable"] for _, result in planned[0].rounds["A"]} == {sys.executable}
    assert measure.zygotes == {}  # closed with the run


def test_the_cells_first_visit_calibrates_each_side_traces_and_verifies_once_and_both_time_one_loop(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from stratabench.engine import ab

    plans: list[tuple[str, str, RoundPlan]] = []

    def run_cell(spec: CellSpec, options: RunOptions, zygotes: Any, plan: RoundPlan | None = None) -> CellResult:
        assert plan is not None
        plans.append((spec.name, zygotes.python, plan))
        # A calibration that depends on the side (as one run while descheduled does): A would loop once, B 300 times.
        loops = plan.loops if plan.loops is not None else 1 if zygotes.python == "python-a" else 300
        return CellResult(spec.suite, spec.name, {}, "python", "ok", loops=loops,
                          metrics={"wall_ns": MetricResult.of([1.0])})

    monkeypatch.setattr(ab, "run_cell", run_cell)
    options = RunOptions(engine=EngineOptions(samples=3))
    sides = [Side("A", "a", options, "python-a"), Side("B", "b", options, "python-b")]
    with ForkedMeasure([]) as measure:
        monkeypatch.setattr(ab, "Zygotes", lambda preload, python: SimpleNamespace(python=python, close=lambda: None,
                                                                                 for_round=lambda number: None))
        run_ab(cells(2), sides, range(3), 0, measure, Sink(), QuietProgress(io.StringIO()))
    assert len(plans) == 2 * 2 * 3
    for name in ("c0", "c1"):
        visits = [(python, plan) for cell, python, plan in plans if cell == name]
        # Round 0 runs A first: A calibrates; B's first visit traces and verifies but times A's loop.
        assert [(python, plan.number, plan.first, plan.loops, plan.samples) for python, plan in visits] == [
            ("python-a", 0, True, None, 3), ("python-b", 0, True, 1, 3),
            *((python, number, False, 1, 3) for number, pair in ((1, ("python-b", "python-a")),
                                                                 (2, ("python-a", "python-b"))) for python in pair)]


class FakeGo:
    """A side's Go adapter on a fake clock: wall time only (no worker CPU time), B 20% slower, the machine drifting."""

    def __init__(self, cost: float, moment: "itertools.count[int]") -> None:
        self.cost, self.moment, self.calls = cost, moment, 0

    def run_external(self, cells: list[CellSpec], workdir: Path) -> Any:
        self.calls += 1
        for spec in cells:
            drift = 1.02 ** next(self.moment)
            yield CellResult(spec.suite, spec.name, {}, "go", "ok", loops=100, judged="wall_ns",
                             metrics={"wall_ns": MetricResult.of([self.cost * drift, self.cost * drift * 1.05])})


def test_a_go_cell_without_cpu_time_is_judged_on_its_wall_time_and_says_so() -> None:
    moment = itertools.count()
    go = CellSpec("s", "go json/warm", {}, "go")
    py = CellSpec("s", "json/raw")
    planned = [AbCell({"A": go, "B": go}, {"A": FakeGo(100.0, moment), "B": FakeGo(120.0, moment)}),
               AbCell({"A": py, "B": py})]

    def measure(spec: CellSpec, side: Side, number: int) -> CellResult:
        value = 100.0 * 1.02 ** next(moment)
        return CellResult(spec.suite, spec.name, {}, "python", "ok", loops=1,
                          metrics={"wall_ns": MetricResult.of([value]), "cpu_ns": MetricResult.of([value])})

    run_ab(planned, SIDES, range(6), 4, measure, Sink(), QuietProgress(io.StringIO()))
    options = RunOptions()
    go_a, go_b = (planned[0].result(label, options) for label in ("A", "B"))
    # Without a fallback a Go cell cannot be compared on CPU time; with wall time as the fallback it is.
    assert judge(go_a, go_b, metric("cpu_ns"), 0.05) is None
    judged = judge(go_a, go_b, metric("cpu_ns"), 0.05, fallback=metric("wall_ns"))
    assert judged is not None and judged.metric == "wall_ns" and judged.pairs == 6
    assert judged.verdict == "slower" and abs(judged.ratio / 1.20 - 1) < 0.03
    python = judge(*(planned[1].result(label, options) for label in ("A", "B")), metric("cpu_ns"), 0.05,
                   fallback=metric("wall_ns"))
    assert python is not None and python.metric == "cpu_ns"
    line = ab_summary([judged, python], metric("cpu_ns"), 0.05, 0, 0.99)
    assert "cpu_ns on 1, wall_ns on 1" in line
    table = ab_table([judged, python], metric("cpu_ns"), "t", [])
    assert [row["metric"] for row in table.rows] == ["wall_ns", "cpu_ns"]


def test_a_suites_external_cells_go_to_each_sides_adapter_as_one_batch_a_round_in_abba_order() -> None:
    moment = itertools.count()
    adapters = {"A": FakeGo(100.0, moment), "B": FakeGo(100.0, moment)}
    batches: list[tuple[str, list[str]]] = []
    for label, adapter in adapters.items():
        run = adapter.run_external

        def logged(cells: list[CellSpec], workdir: Path, label: str = label, run: Any = run) -> Any:
            batches.append((label, [cell.name for cell in cells]))
            yield from run(cells, workdir)

        adapter.run_external = logged  # type: ignore[method-assign]
    specs = [CellSpec("s", f"go {n}", {}, "go") for n in range(3)]
    planned = [AbCell({"A": spec, "B": spec}, dict(adapters)) for spec in specs]
    sink = Sink()
    run_ab(planned, SIDES, range(4), 2, lambda spec, side, number: pytest.fail("no Python cell"), sink,
           QuietProgress(io.StringIO()))
    names = ["go 0", "go 1", "go 2"]
    assert batches == [("A", names), ("B", names), ("B", names), ("A", names)] * 2
    assert len(sink.results) == 3 * 2 * 4 and all(len(cell.rounds["A"]) == 4 for cell in planned)


def test_an_adapter_that_fails_mid_batch_fails_the_cells_it_had_not_reported_with_its_reason() -> None:
    from stratabench.errors import StratabenchError

    class Broken:
        def run_external(self, cells: list[CellSpec], workdir: Path) -> Any:
            yield CellResult(cells[0].suite, cells[0].name, {}, "go", "ok", loops=1,
                             metrics={"wall_ns": MetricResult.of([1.0])})
            raise StratabenchError("Go program crashed")

    specs = [CellSpec("s", f"go {n}", {}, "go") for n in range(3)]
    planned = [AbCell({"A": spec, "B": spec}, {"A": Broken(), "B": Broken()}) for spec in specs]
    run_ab(planned, SIDES, range(2), 0, lambda spec, side, number: pytest.fail("no Python cell"), Sink(),
           QuietProgress(io.StringIO()))
    assert planned[0].failed is None and len(planned[0].rounds["A"]) == 2
    for cell in planned[1:]:
        assert cell.failed is not None and cell.failed.error == "Go program crashed"
        assert len(cell.rounds["A"]) + len(cell.rounds["B"]) == 1  # a failed cell is measured no more
