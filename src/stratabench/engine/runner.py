"""Running a plan: every cell planned first, then measured, each result streamed.

The plan comes from above (the suites build it); the engine never names a suite.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from stratabench.engine.cell import run_cell, status_of
from stratabench.engine.operation import CellSpec
from stratabench.engine.rounds import Round, reference_ns, run_rounds
from stratabench.engine.slices import SlicedRun, SlicedRunner
from stratabench.engine.zygote import Zygotes, settle
from stratabench.errors import StratabenchError
from stratabench.options import RunOptions
from stratabench.results.format import round_record
from stratabench.results.records import CellResult

__all__ = ["ExternalRunner", "Plan", "Progress", "execute"]


class Progress(Protocol):
    """Receives the run's progress; the CLI shows it, tests record it."""

    def start(self, total: int) -> None: ...

    def cell_started(self, spec: CellSpec) -> None: ...

    def cell_finished(self, result: CellResult) -> None: ...

    def warn(self, message: str) -> None: ...

    def finish(self) -> None: ...


class ExternalRunner(Protocol):
    """Measures a group's cells whose ``language`` is not Python (a suite's Go adapter)."""

    def run_external(self, cells: Sequence[CellSpec], workdir: Path) -> Iterator[CellResult]: ...


class ResultSink(Protocol):
    def write(self, result: CellResult) -> None: ...

    def write_round(self, record: dict[str, Any]) -> None: ...


@dataclass
class Plan:
    """The groups of a run (one per suite) and their cells, built before anything is measured.

    Each group pairs the runner of its external cells with every cell; the
    Python cells carry their own operation factory.
    """

    suites: list[tuple[ExternalRunner, list[CellSpec]]] = field(default_factory=list)
    #: Modules every zygote imports besides the cells' factory modules (the drivers of the run's server stores).
    preload: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return sum(len(cells) for _, cells in self.suites)


def execute(plan: Plan, options: RunOptions, sink: ResultSink, progress: Progress) -> list[CellResult]:
    """Measure every planned cell, writing each result as soon as it exists.

    Python cells of every suite are measured together in rounds
    (:mod:`stratabench.engine.rounds`): each round gives every cell still
    sampling a fresh worker (forked from a zygote that imported the cells'
    factory modules once, a new zygote every round, as
    :meth:`~stratabench.engine.zygote.Zygotes.for_round` says why; the
    round's zygotes, one per environment its cells need, start together before
    its first cell; unless
    ``--spawn``; this process with ``--in-process``), in a seeded shuffled order with each group's cells
    back to back; a cell's result is written when it drops out, and
    each round's record (order, reference workload) when it ends. A suite
    whose external cells can be measured a slice at a time
    (:class:`~stratabench.engine.slices.SlicedRunner`) takes its slices
    between the rounds, each cell written merged after its suite's last
    slice; any other suite's external cells (Go) are then handed to its
    adapter together. An interrupt propagates after every cell measured so
    far is written, so nothing measured is lost. Results come back in the
    plan's order.
    """
    results: dict[tuple[str, str], CellResult] = {}

    def record(result: CellResult) -> None:
        sink.write(result)
        results[(result.suite, result.cell)] = result
        progress.cell_finished(result)

    seed = options.engine.round_seed if options.engine.round_seed is not None else random.SystemRandom().randrange(2**32)

    def write_round(ended: Round) -> None:
        sink.write_round(round_record(ended.number, list(ended.order), ended.reference_ns, ended.at_s, seed))

    python_cells = [cell for _, cells in plan.suites for cell in cells if cell.language == "python"]
    factories = [cell.factory.partition(":")[0] for cell in python_cells if cell.factory]
    progress.start(plan.total)
    counting = options.engine.count is not None
    externals = [(suite, external) for suite, cells in plan.suites
                 if (external := [cell for cell in cells if cell.language != "python"])]
    try:
        with tempfile.TemporaryDirectory(prefix="stratabench-external-") as workdir:
            # Sliced suites take their repetitions between the Python rounds (engine/slices.py says why).
            sliced = SlicedRun(options.engine.samples or options.engine.min_samples, record, progress.cell_started,
                               options=options.engine)
            try:
                if not counting:
                    for suite, external in externals:
                        if isinstance(suite, SlicedRunner):
                            sliced.open(suite, external, _own(Path(workdir), external))
                last_round = -1
                with Zygotes(dict.fromkeys([*factories, *plan.preload])) as zygotes:
                    if counting:
                        # A count is exact: one per cell, under callgrind, without rounds to average the machine out.
                        for cell in python_cells:
                            progress.cell_started(cell)
                            record(run_cell(cell, options, zygotes))
                    else:
                        def round_started(number: int, cells: Sequence[CellSpec]) -> None:
                            if options.engine.isolate and options.engine.fork:  # the round's workers fork from its zygotes
                                zygotes.for_round(number).start(cell.env for cell in cells)

                        def round_ended(ended: Round) -> None:
                            nonlocal last_round
                            last_round = ended.number
                            write_round(ended)
                            sliced.after_round(ended.number)

                        def settled_reference() -> float:
                            # The round's last worker may still be exiting (zygote.py says why): gone before the
                            # reference workload, and the slices after it, are measured here.
                            settle()
                            return reference_ns()

                        run_rounds(python_cells, options.engine,
                                   lambda spec, round_plan: run_cell(spec, options, zygotes.for_round(round_plan.number),
                                                                     round_plan),
                                   seed=seed, finished=record, round_started=round_started, round_ended=round_ended,
                                   started=progress.cell_started, reference=settled_reference)
                sliced.finish(last_round + 1)
            finally:
                sliced.close()  # after an interrupt: every cell with a slice so far, merged
            for suite, external in externals:
                if counting:
                    _refuse_uncountable(external, record)
                elif not isinstance(suite, SlicedRunner):
                    _run_external(suite, external, record, progress, _own(Path(workdir), external))
    finally:
        progress.finish()
    return [results[(cell.suite, cell.name)] for _, cells in plan.suites for cell in cells
            if (cell.suite, cell.name) in results]


def _own(workdir: Path, cells: Sequence[CellSpec]) -> Path:
    """A directory of the run's external directory for one suite's cells alone (their files never meet another's)."""
    own = workdir / cells[0].suite
    own.mkdir(exist_ok=True)
    return own


def _refuse_uncountable(cells: Sequence[CellSpec], record: Callable[[CellResult], None]) -> None:
    """``--count``: an external cell (Go) is another program, which callgrind's count of Python does not cover."""
    from stratabench.engine.counting import uncountable

    for cell in cells:
        record(CellResult.failure(cell, "unsupported", uncountable(cell) or "cannot be counted"))


def _run_external(suite: ExternalRunner, cells: Sequence[CellSpec], record: Callable[[CellResult], None],
                  progress: Progress, workdir: Path) -> None:
    """Hand a suite's external cells to its adapter; failures land on the cells."""
    pending = {cell.name: cell for cell in cells}
    progress.cell_started(cells[0])
    try:
        for result in suite.run_external(cells, workdir):
            pending.pop(result.cell, None)
            record(result)
            if pending:
                progress.cell_started(next(iter(pending.values())))
    except StratabenchError as error:
        # The adapter failed as a whole (Go missing, build broken): every
        # cell it had not reported yet carries the one-line reason.
        for cell in pending.values():
            record(CellResult.failure(cell, status_of(error), error.message))
