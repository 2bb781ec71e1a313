"""Progress of a run: a live bar on a terminal, plain lines otherwise.

Progress and warnings go to stderr, so stdout carries only the report and
can be redirected to a file or piped.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from typing import Any, TextIO

from stratabench.engine.operation import CellSpec
from stratabench.metrics import METRICS
from stratabench.results.records import CellResult

__all__ = ["LineProgress", "QuietProgress", "TerminalProgress", "TimeLeft", "make_progress"]


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
        self.estimates: dict[tuple[str, str], float] = {}

    def expect(self, estimates: Mapping[tuple[str, str], float]) -> None:
        """Each planned cell's expected seconds, for the time left."""
        self.estimates = dict(estimates)

    def start(self, total: int) -> None:
        self.total = total
        if not self.estimates:  # with estimates, the run has printed its plan already
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


class TimeLeft:
    """The time left, from the cells' estimates scaled by how the run has kept to them so far.

    It moves during a long cell: the current cell counts as done up to its
    own estimate, so the figure falls while it runs and stops falling when
    the cell overruns.
    """

    def __init__(self) -> None:
        self.began = time.monotonic()
        self.cell_began = self.began
        self.estimates: dict[tuple[str, str], float] = {}
        self.done_estimate = 0.0
        self.current = 0.0

    def seconds(self) -> float | None:
        total = sum(self.estimates.values())
        if not total:
            return None
        now = time.monotonic()
        in_cell = min(now - self.cell_began, self.current)
        expected_so_far = self.done_estimate + in_cell
        pace = (now - self.began) / expected_so_far if expected_so_far > 5 else 1.0
        return max(0.0, (total - expected_so_far) * pace)


class TerminalProgress(LineProgress):
    """A live progress bar with the cell being measured and the time left; finished cells scroll above it."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__(stream)
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
        from rich.text import Text

        left = self.left = TimeLeft()

        class TimeLeftColumn(ProgressColumn):
            def render(self, task: Any) -> Text:
                seconds = left.seconds()
                if seconds is None:
                    return Text("")
                minutes, secs = divmod(int(seconds), 60)
                return Text(f"about {minutes}:{secs:02d} left")

        self.console = Console(file=self.stream)
        self.bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TimeLeftColumn(), console=self.console, transient=True,
        )
        self.task = self.bar.add_task("starting", total=None)

    def start(self, total: int) -> None:
        self.total = total
        self.left.began = self.left.cell_began = time.monotonic()
        self.left.estimates = self.estimates
        self.bar.update(self.task, total=total)
        self.bar.start()

    def cell_started(self, spec: CellSpec) -> None:
        self.left.cell_began = time.monotonic()
        self.left.current = self.estimates.get((spec.suite, spec.name), 0.0)
        self.bar.update(self.task, description=f"{spec.suite} {spec.name}")

    def cell_finished(self, result: CellResult) -> None:
        self.done += 1
        self.left.done_estimate += self.estimates.get((result.suite, result.cell), 0.0)
        self.left.current = 0.0
        self.left.cell_began = time.monotonic()
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
