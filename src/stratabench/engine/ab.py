"""Two sides measured in one run, cell by cell, in randomized ABBA rounds (``stratabench ab``).

A comparison of two runs made minutes apart carries the machine's drift
between them in every ratio; on a shared machine that drift is ±30% a
cell. ``ab`` measures both sides in one run instead, interleaved as
tango-bench and asv's ``--interleave-rounds`` do, so a swing of the machine
falls on both sides of a pair and cancels in their ratio:

1. Both sides have the same plan of cells (:class:`Side` carries what
   differs: an interpreter, with zygotes of its own, or run options such as
   a setting or a store URL).
2. Each round visits every cell still measured in the run's round order
   (:func:`stratabench.engine.rounds.round_order`): cells shuffled by
   ``(seed, round)``, a cell's two sides a group run back to back, A then B
   in even rounds and B then A in odd ones (ABBA), so neither side always
   runs first, on a warmer or a cooler machine.
3. Each visit is a fresh worker, forked from its side's zygote (new
   zygotes every round: :class:`ForkedMeasure` says why), taking the
   round's samples. Each side's rounds merge into one result as a run's
   cell does (:class:`stratabench.engine.rounds.CellRounds`: every timed
   sample with its round), and the report pairs the two sides round by
   round (:mod:`stratabench.report.ab`).

Go cells (and the other cells measured outside a Python worker) run
through each side's adapter (for another Python environment, that
environment's own stratabench and Go build): a suite's such cells as one
batch per side and round, the two batches back to back in the same ABBA
order. The scheduling knows nothing of how a cell is measured
(tests pass a fake ``measure``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from stratabench.engine.cell import run_cell, status_of
from stratabench.engine.operation import CellSpec
from stratabench.engine.rounds import CellRounds, round_order
from stratabench.engine.runner import ExternalRunner, Progress, ResultSink
from stratabench.engine.sampling import RoundPlan
from stratabench.engine.zygote import Zygotes, settle
from stratabench.errors import StratabenchError
from stratabench.options import RunOptions
from stratabench.results.records import CellResult

__all__ = ["SIDES", "AbCell", "ForkedMeasure", "Measure", "Side", "run_ab", "run_until_sure"]

#: The two sides' labels, in their even rounds' order.
SIDES = ("A", "B")


@dataclass(frozen=True)
class Side:
    """One side of a comparison.

    Attributes
    ----------
    label
        ``A`` (the baseline) or ``B``.
    description
        What the side is, for the report: ``python /venv/bin/python``,
        ``--set sqlite.journal_mode=wal``, ``store redis://...``.
    options
        The run options its cells are measured with.
    python
        Its interpreter; its zygotes run it.
    """

    label: str
    description: str
    options: RunOptions
    python: str


@dataclass
class AbCell:
    """One cell of the common plan and what each side measured of it, round by round.

    Attributes
    ----------
    specs
        The cell as each side planned it, by side label (the same suite,
        name and parameters; a setting's side carries its own options).
    runner
        Each side's adapter for an external (Go) cell; empty for a Python cell.
    rounds
        Per side label, each round's result in round order.
    """

    specs: dict[str, CellSpec]
    runner: dict[str, ExternalRunner] = field(default_factory=dict)
    rounds: dict[str, list[tuple[int, CellResult]]] = field(default_factory=lambda: {label: [] for label in SIDES})

    @property
    def spec(self) -> CellSpec:
        return self.specs[SIDES[0]]

    @property
    def failed(self) -> CellResult | None:
        """The first failed result of either side: a cell that failed once is measured no more."""
        return next((result for results in self.rounds.values() for _, result in results if not result.ok), None)

    def result(self, label: str, options: RunOptions) -> CellResult:
        """Side ``label``'s rounds merged into one result, as a run merges a cell's: each timed sample keeps its
        round, so :func:`stratabench.results.records.paired_ratio_of` pairs the two sides round by round."""
        merged = CellRounds(self.specs[label], options.engine)
        for number, result in self.rounds[label]:
            wall = result.metrics.get("wall_ns")
            merged.add(result, RoundPlan(number, result.loops, len(wall.samples) if wall else 0, merged.first is None))
        return merged.result()


#: Measures one cell for one side in one round (a forked worker in a run; a fake in tests).
Measure = Callable[[CellSpec, Side, int], CellResult]


class ForkedMeasure:
    """Measures a Python cell in a fresh worker forked from its side's zygote, with new zygotes every round.

    With one zygote per side for the whole run, its layout and hash seed
    (:meth:`~stratabench.engine.zygote.Zygotes.for_round` says why they
    matter) were in every pair of a cell: 5 of 16 intervals held the true
    ratio, and a side against itself came out 3-9% slower or faster. With
    ASLR off and a fixed seed both sides of one environment would share one
    layout, but two environments (the comparison ``ab`` is for) would still
    differ by a fixed, unseen one. The cost: two zygote starts a round.

    Each visit is one round of the cell as a run measures it
    (:class:`~stratabench.engine.sampling.RoundPlan`): a side's first visit
    traces memory and verifies; later ones only time the loop. The loop
    count is the cell's, not the side's: the cell's first visit calibrates
    it and both sides time that same loop in every round. Calibrated per
    side, one side of ``bulkload arrow/table`` (a 40 µs load) once timed
    its calibration run while descheduled at a load of 12 and kept a loop
    of 1 for the whole run where the other side's was 300: each of its
    samples was then one cold call (a fresh buffer's page faults, cold
    caches), 5x the warm loop's cost per operation, and a self-comparison
    called the cell 0.21x "faster" in all six rounds. With one loop count
    both sides measure the same thing, whatever the calibration chose.
    """

    def __init__(self, preload: Iterable[str]) -> None:
        self.preload = tuple(preload)
        self.zygotes: dict[str, Zygotes] = {}
        self.loops: dict[tuple[str, str, str], int | None] = {}
        self.visited: set[tuple[str, tuple[str, str, str]]] = set()

    def __call__(self, spec: CellSpec, side: Side, number: int) -> CellResult:
        zygotes = self.zygotes.get(side.label)
        if zygotes is None:
            zygotes = self.zygotes[side.label] = Zygotes(self.preload, side.python)
        zygotes.for_round(number)
        key = (spec.suite, spec.name, repr(sorted(spec.params.items())))
        first = (side.label, key) not in self.visited
        engine = side.options.engine
        plan = RoundPlan(number, self.loops.get(key), engine.samples or engine.round_samples, first)
        result = run_cell(spec, side.options, zygotes, plan)
        if result.ok:
            self.visited.add((side.label, key))
            self.loops.setdefault(key, result.loops)
        return result

    def close(self) -> None:
        """End the round's zygotes."""
        for zygotes in self.zygotes.values():
            zygotes.close()
        self.zygotes.clear()

    def __enter__(self) -> ForkedMeasure:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _external(group: Sequence[AbCell], side: Side) -> Iterator[tuple[AbCell, CellResult]]:
    """A suite's external (Go) cells on one side in one round: one call of the side's adapter for them all.

    The adapter starts its program once for the batch (a Go benchmark binary,
    treestore's worker per backend, which builds its dataset first), as a
    run's does; one call per cell paid that start at every visit, more than
    the cell's own measurement. Each cell gets its result, or the adapter's
    one-line reason.
    """
    label = side.label
    pending = {cell.specs[label].name: cell for cell in group}
    settle()  # the last Python worker may still be exiting (zygote.py says why): gone before these are measured
    with tempfile.TemporaryDirectory(prefix="stratabench-ab-") as workdir:
        try:
            for result in group[0].runner[label].run_external([cell.specs[label] for cell in group], Path(workdir)):
                cell = pending.pop(result.cell, None)
                if cell is not None:
                    yield cell, result
        except StratabenchError as error:
            for cell in pending.values():
                yield cell, CellResult.failure(cell.specs[label], status_of(error), error.message)
            return
    for cell in pending.values():
        yield cell, CellResult.failure(cell.specs[label], "failed", "the adapter returned no result for this cell")


#: One visit of a round: its block (a Python cell, or a suite's external cells), a side, and the cells it measures.
_Visit = tuple[tuple[str, object], str, list[AbCell]]


def _visits(live: Sequence[AbCell]) -> list[_Visit]:
    """A round's visits: each Python cell on each side, and each suite's external cells as one batch a side."""
    visits: list[_Visit] = []
    batches: dict[str, list[AbCell]] = {}
    for index, cell in enumerate(live):
        if cell.spec.language == "python":
            visits += [(("cell", index), label, [cell]) for label in SIDES]
        else:
            batches.setdefault(cell.spec.suite, []).append(cell)
    for suite, group in batches.items():
        visits += [(("suite", suite), label, group) for label in SIDES]
    return visits


def run_ab(cells: Sequence[AbCell], sides: Sequence[Side], rounds: Iterable[int], seed: int,
           measure: Measure, sink: ResultSink, progress: Progress) -> None:
    """Measure every cell on both sides over ``rounds``, in ABBA order, writing each result as it comes.

    Each result goes to ``sink`` with its side and round in its notes, so
    the results file keeps every value; a cell that failed on either side
    is measured no more. ``cells`` accumulate their rounds, so a later call
    (``--until-sure``) adds rounds to the ones a cell has. A suite's
    external cells go to each side's adapter together (:func:`_external`),
    the two sides' batches back to back in the same ABBA order.
    """
    by_label = {side.label: side for side in sides}

    def record(cell: AbCell, label: str, number: int, result: CellResult) -> None:
        result = replace(result, notes={**result.notes, "ab_side": label, "ab_round": number})
        sink.write(result)
        cell.rounds[label].append((number, result))
        progress.cell_finished(result)

    for number in rounds:
        live = [cell for cell in cells if cell.failed is None]
        for _, label, group in round_order(_visits(live), number, seed, lambda visit: visit[0]):
            group = [cell for cell in group if cell.failed is None]
            if not group:
                continue
            progress.cell_started(group[0].spec)
            side = by_label[label]
            if group[0].spec.language == "python":
                record(group[0], label, number, measure(group[0].specs[label], side, number))
            else:
                for cell, result in _external(group, side):
                    record(cell, label, number, result)


def run_until_sure(cells: Sequence[AbCell], sides: Sequence[Side], rounds: int, more: int, seed: int,
                   measure: Measure, sink: ResultSink, progress: Progress, unsure: Callable[[AbCell], bool]) -> None:
    """``rounds`` rounds of every cell, then up to ``more`` rounds of the cells ``unsure`` still calls inconclusive.

    The extra rounds come two at a time (a pair keeps the ABBA balance:
    each side first once), re-judged after each pair, and stop when no cell
    is unsure or ``more`` is spent: a cell that stays inconclusive is
    measured ``rounds + more`` times at most, never until it happens to
    clear (which, tried often enough, any cell would); each re-judgement is
    one more look, paid for in the interval's level
    (:func:`stratabench.report.ab.family_level`).
    """
    run_ab(cells, sides, range(rounds), seed, measure, sink, progress)
    number = rounds
    while number < rounds + more:
        again = [cell for cell in cells if unsure(cell)]
        if not again:
            break
        extra = range(number, min(number + 2, rounds + more))
        run_ab(again, sides, extra, seed, measure, sink, progress)
        number = extra.stop
