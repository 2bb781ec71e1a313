"""``ab``'s rounds: ABBA order, shuffled per round from a seed, and a paired ratio that cancels the machine's drift."""

from __future__ import annotations

import io
import itertools
import os
import sys
import textwrap
from pathlib import Path

import pytest

from stratabench.cli.progress import QuietProgress
from stratabench.engine.ab import AbCell, Side, ab_order, forked_measure, run_ab
from stratabench.engine.operation import CellSpec
from stratabench.engine.zygote import Zygotes
from stratabench.metrics import metric
from stratabench.options import EngineOptions, RunOptions
from stratabench.report.ab import judge
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


def test_each_cells_sides_run_back_to_back_a_first_in_even_rounds_b_first_in_odd() -> None:
    planned = cells(10)
    for number in range(4):
        order = ab_order(planned, number, seed=7)
        assert len(order) == 20
        for (first, first_side), (second, second_side) in zip(order[::2], order[1::2]):
            assert first is second
            assert (first_side, second_side) == (("A", "B") if number % 2 == 0 else ("B", "A"))


def test_the_cells_order_is_shuffled_each_round_and_repeats_with_its_seed() -> None:
    planned = cells(10)
    names = [[cell.spec.name for cell, _ in ab_order(planned, number, seed=7)[::2]] for number in range(4)]
    assert len({tuple(order) for order in names}) == 4  # a new order every round
    assert names[0] == [cell.spec.name for cell, _ in ab_order(planned, 0, seed=7)[::2]]
    assert names[0] != [cell.spec.name for cell, _ in ab_order(planned, 0, seed=8)[::2]]


def test_the_paired_ratio_cancels_a_drift_of_the_machine() -> None:
    # The machine slows by 3% at every visit: over 12 rounds of 8 cells it ends 6x slower than it began.
    # B costs 10% more than A in every cell.
    visits = itertools.count()
    cost = {"A": 100.0, "B": 110.0}

    def measure(spec: CellSpec, side: Side, number: int) -> CellResult:
        value = cost[side.label] * 1.03 ** next(visits)
        return CellResult(spec.suite, spec.name, {}, "python", "ok", loops=1,
                          metrics={"wall_ns": MetricResult.of([value])})

    planned = cells(8)
    sink = Sink()
    run_ab(planned, SIDES, range(12), 1, measure, sink, QuietProgress(io.StringIO()))
    assert len(sink.results) == 8 * 2 * 12
    assert {result.notes["ab_side"] for result in sink.results} == {"A", "B"}
    for cell in planned:
        verdict = judge("s", cell.spec.name, cell.rounds["A"], cell.rounds["B"], metric("wall_ns"), 0.05)
        assert verdict is not None and verdict.pairs == 12
        assert verdict.low <= 1.10 <= verdict.high and abs(verdict.ratio / 1.10 - 1) < 0.031
        assert verdict.verdict == "slower" and verdict.worse
        # Unpaired, the two sides' medians are minutes apart: their ratio carries the drift.
        assert abs(verdict.b / verdict.a / 1.10 - 1) < 0.5


def test_identical_sides_are_unchanged_or_inconclusive_never_a_change() -> None:
    noise = itertools.cycle([1.00, 1.02, 0.99, 1.03, 0.98, 1.01, 0.97])

    def measure(spec: CellSpec, side: Side, number: int) -> CellResult:
        return CellResult(spec.suite, spec.name, {}, "python", "ok", loops=1,
                          metrics={"wall_ns": MetricResult.of([100.0 * next(noise)])})

    planned = cells(20)
    run_ab(planned, SIDES, range(8), 3, measure, Sink(), QuietProgress(io.StringIO()))
    words = {judge("s", c.spec.name, c.rounds["A"], c.rounds["B"], metric("wall_ns"), 0.05).verdict  # type: ignore[union-attr]
             for c in planned}
    assert words <= {"unchanged", "inconclusive"}


def test_counts_are_judged_by_their_tolerance() -> None:
    def result(value: float) -> list[tuple[int, CellResult]]:
        return [(0, CellResult("s", "c", {}, "python", "ok", loops=1,
                               metrics={"instructions": MetricResult.of([value])}))]

    assert judge("s", "c", result(1000), result(1005), metric("instructions"), 0.05).verdict == "unchanged"  # type: ignore[union-attr]
    moved = judge("s", "c", result(1000), result(1020), metric("instructions"), 0.05)
    assert moved is not None and moved.verdict == "more" and moved.worse and moved.level == 1.0


PROBE = '''
import os, sys
from stratabench.engine.operation import Operation


class Probe:
    def __init__(self, options):
        self.options = options

    def prepare(self, cell, workdir):
        return Operation(call=lambda: None, trace_memory=False,
                         notes={"executable": sys.executable, "zygote": os.getppid()})
'''


def test_each_environment_has_zygotes_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ab_probe.py").write_text(textwrap.dedent(PROBE))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    # Another path to this environment's interpreter (a venv's bin/python3): B's environment, started on its own.
    other = next(path for path in (Path(sys.executable).with_name(name) for name in ("python3", "python3.11", "python"))
                 if path.exists() and str(path) != sys.executable)
    options = RunOptions(engine=EngineOptions(samples=1, warmups=0, min_sample_ns=0, memory_samples=0))
    sides = [Side("A", "a", options, sys.executable), Side("B", "b", options, str(other))]
    spec = CellSpec("probe", "p", {}, "python", {}, "ab_probe:Probe")
    planned = [AbCell({"A": spec, "B": spec})]
    with Zygotes(["ab_probe"], sys.executable) as mine, Zygotes(["ab_probe"], str(other)) as theirs:
        run_ab(planned, sides, range(2), 0, forked_measure(sides, {"A": mine, "B": theirs}), Sink(), QuietProgress(io.StringIO()))
        a, b = ({result.notes["zygote"] for _, result in planned[0].rounds[label]} for label in ("A", "B"))
        assert a == {mine.for_env({}).pid} and b == {theirs.for_env({}).pid}
    assert {result.notes["executable"] for _, result in planned[0].rounds["B"]} == {str(other)}
