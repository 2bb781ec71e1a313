"""Progress of a run: a live bar on a terminal, plain lines otherwise.

Progress and warnings go to stderr, so stdout carries only the report and
can be redirected to a file or piped.
"""

from __future__ import annotations

import sys
from typing import TextIO

from stratabench.engine.operation import CellSpec
from stratabench.metrics import METRICS
from stratabench.results.records import CellResult

__all__ = ["LineProgress", "QuietProgress", "TerminalProgress", "make_progress"]


def describe(result: CellResult) -> str:
    """One line for a finished cell: its median time, or why it did not run."""
    wall = result.median("wall_ns")
    if result.ok:
        return f"ok  {METRICS['wall_ns'].format(wall)}/op" if wall is not None else "ok"
    return f"{result.status}: {result.error}"


class LineProgress:
    """One line per finished cell, for logs and files."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.total = 0
        self.done = 0

    def start(self, total: int) -> None:
        self.total = total
        print(f"measuring {total} cells", file=self.stream, flush=True)

    def cell_started(self, spec: CellSpec) -> None:
        pass

    def cell_finished(self, result: CellResult) -> None:
        self.done += 1
        width = len(str(self.total))
        print(f"[{self.done:>{width}}/{self.total}] {result.suite} {result.cell}: {describe(result)}",
              file=self.stream, flush=True)

    def warn(self, message: str) -> None:
        print(f"warning: {message}", file=self.stream, flush=True)

    def finish(self) -> None:
        pass


class TerminalProgress(LineProgress):
    """A live progress bar with the cell being measured; finished cells scroll above it."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__(stream)
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = Console(file=self.stream)
        self.bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=self.console, transient=True,
        )
        self.task = self.bar.add_task("starting", total=None)

    def start(self, total: int) -> None:
        self.total = total
        self.bar.update(self.task, total=total)
        self.bar.start()

    def cell_started(self, spec: CellSpec) -> None:
        self.bar.update(self.task, description=f"{spec.suite} {spec.name}")

    def cell_finished(self, result: CellResult) -> None:
        self.done += 1
        self.bar.console.print(f"{result.suite} {result.cell}: {describe(result)}", markup=False, highlight=False)
        self.bar.update(self.task, completed=self.done)

    def warn(self, message: str) -> None:
        self.console.print(f"warning: {message}", markup=False, highlight=False)

    def finish(self) -> None:
        self.bar.stop()


class QuietProgress(LineProgress):
    """Only warnings."""

    def start(self, total: int) -> None:
        self.total = total

    def cell_finished(self, result: CellResult) -> None:
        self.done += 1


def make_progress(quiet: bool = False, stream: TextIO | None = None) -> LineProgress:
    """A bar on a terminal, lines elsewhere, warnings only with ``quiet``."""
    stream = stream or sys.stderr
    if quiet:
        return QuietProgress(stream)
    if stream.isatty():
        return TerminalProgress(stream)
    return LineProgress(stream)
