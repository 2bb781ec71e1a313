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
from stratabench.engine.rounds import Round, run_rounds
from stratabench.engine.zygote import Zygotes
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
    each round's record (order, reference workload) when it ends. A suite's
    external cells (Go) are then handed to its adapter together. An
    interrupt propagates after every cell measured so far is written, so
    nothing measured is lost. Results come back in the plan's order.
    """
    results: dict[tuple[str, str], CellResult] = {}

    def record(result: CellResult) -> None:
        sink.write(result)
        results[(result.suite, result.cell)] = result
        progress.cell_finished(result)

    seed = options.engine.round_seed if options.engine.round_seed is not None else random.SystemRandom().randrange(2**32)

    def round_ended(ended: Round) -> None:
        sink.write_round(round_record(ended.number, list(ended.order), ended.reference_ns, ended.at_s, seed))

    python_cells = [cell for _, cells in plan.suites for cell in cells if cell.language == "python"]
    factories = [cell.factory.partition(":")[0] for cell in python_cells if cell.factory]
    progress.start(plan.total)
    try:
        with Zygotes(dict.fromkeys([*factories, *plan.preload])) as zygotes:
            if options.engine.count is not None:
                # A count is exact: one per cell, under callgrind, without rounds to average the machine out.
                for cell in python_cells:
                    progress.cell_started(cell)
                    record(run_cell(cell, options, zygotes))
            else:
                def round_started(number: int, cells: Sequence[CellSpec]) -> None:
                    if options.engine.isolate and options.engine.fork:  # the round's workers fork from its zygotes
                        zygotes.for_round(number).start(cell.env for cell in cells)

                run_rounds(python_cells, options.engine,
                           lambda spec, round_plan: run_cell(spec, options, zygotes.for_round(round_plan.number),
                                                             round_plan),
                           seed=seed, finished=record, round_started=round_started, round_ended=round_ended,
                           started=progress.cell_started)
        for suite, cells in plan.suites:
            external = [cell for cell in cells if cell.language != "python"]
            if external and options.engine.count is not None:
                _refuse_uncountable(external, record)
            elif external:
                _run_external(suite, external, record, progress)
    finally:
        progress.finish()
    return [results[(cell.suite, cell.name)] for _, cells in plan.suites for cell in cells
            if (cell.suite, cell.name) in results]


def _refuse_uncountable(cells: Sequence[CellSpec], record: Callable[[CellResult], None]) -> None:
    """``--count``: an external cell (Go) is another program, which callgrind's count of Python does not cover."""
    from stratabench.engine.counting import uncountable

    for cell in cells:
        record(CellResult.failure(cell, "unsupported", uncountable(cell) or "cannot be counted"))


def _run_external(suite: ExternalRunner, cells: Sequence[CellSpec], record: object, progress: Progress) -> None:
    """Hand a suite's external cells to its adapter; failures land on the cells."""
    assert callable(record)
    pending = {cell.name: cell for cell in cells}
    progress.cell_started(cells[0])
    with tempfile.TemporaryDirectory(prefix="stratabench-external-") as workdir:
        try:
            for result in suite.run_external(cells, Path(workdir)):
                pending.pop(result.cell, None)
                record(result)
                if pending:
                    progress.cell_started(next(iter(pending.values())))
        except StratabenchError as error:
            # The adapter failed as a whole (Go missing, build broken): every
            # cell it had not reported yet carries the one-line reason.
            for cell in pending.values():
                record(CellResult.failure(cell, status_of(error), error.message))
