"""Running a plan: every cell planned first, then measured, each result streamed.

The plan comes from above (the suites build it); the engine never names a suite.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from stratabench.engine.cell import run_cell, status_of
from stratabench.engine.operation import CellSpec
from stratabench.engine.zygote import Zygotes
from stratabench.errors import StratabenchError
from stratabench.options import RunOptions
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


@dataclass
class Plan:
    """The groups of a run (one per suite) and their cells, built before anything is measured.

    Each group pairs the runner of its external cells with every cell; the
    Python cells carry their own operation factory.
    """

    suites: list[tuple[ExternalRunner, list[CellSpec]]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(len(cells) for _, cells in self.suites)


def execute(plan: Plan, options: RunOptions, sink: ResultSink, progress: Progress) -> list[CellResult]:
    """Measure every planned cell, writing each result as soon as it exists.

    Python cells run one by one (each in its own worker unless
    ``--in-process``; workers are forked from zygotes that imported the
    cells' factory modules once, unless ``--spawn``); a suite's external
    cells (Go) are handed to its adapter together. An interrupt propagates
    after the finished cells are written, so nothing measured is lost.
    """
    results: list[CellResult] = []

    def record(result: CellResult) -> None:
        sink.write(result)
        results.append(result)
        progress.cell_finished(result)

    factories = [cell.factory.partition(":")[0] for _, cells in plan.suites for cell in cells if cell.factory]
    progress.start(plan.total)
    try:
        with Zygotes(dict.fromkeys(factories)) as zygotes:
            for suite, cells in plan.suites:
                python_cells = [cell for cell in cells if cell.language == "python"]
                external = [cell for cell in cells if cell.language != "python"]
                for cell in python_cells:
                    progress.cell_started(cell)
                    record(run_cell(cell, options, zygotes))
                if external and options.engine.count is not None:
                    _refuse_uncountable(external, record)
                elif external:
                    _run_external(suite, external, record, progress)
    finally:
        progress.finish()
    return results


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
