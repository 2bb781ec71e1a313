"""Slices: an external suite's repetitions spread over the run, between the Python rounds.

An external suite measures its cells itself (a study's own worker
processes, a service driven by its test suite). Run all at once after the
rounds, each cell's tries share one short window of the machine, so its
interval leaves out the drift a later run sees: in two default runs back to
back, half the treestore cells and every parking cell had the second run's
median outside the first's interval. A suite that can measure one
repetition at a time (a *slice*: one try, one run of every cell) says so by
:class:`SlicedRunner`. The run then:

1. opens the suite's :class:`SliceSession` before the rounds (it starts
   nothing it would leave busy: an idle worker waits on its input);
2. takes slice ``i`` after Python round :func:`slice_rounds` ``[i]``, spread
   over the floor of rounds every Python cell takes, so the slices fall
   minutes apart; slices the rounds did not reach (a run without Python
   cells, rounds that ended early) run after the rounds, the suites' slices
   alternating;
3. merges each cell's slices into one result (:func:`merge_slices`) whose
   samples carry the round they followed, so its summary is of per-round
   values as a Python cell's is, and writes it after the suite's last slice.

A slice that fails keeps the other slices' values: the cell is ``failed``
and its error names the slice and why. An interrupt writes every cell that
has a slice so far, merged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from stratabench.engine.cell import status_of
from stratabench.engine.operation import CellSpec
from stratabench.errors import StratabenchError
from stratabench.results.records import CellResult, MetricResult
from stratabench.results.stats import instability

__all__ = ["SliceSession", "SlicedRunner", "SlicedRun", "merge_slices", "slice_rounds", "slices_back_to_back"]


@runtime_checkable
class SliceSession(Protocol):
    """One suite's slices of one run: ``count`` of them, each run when the engine asks, then closed."""

    @property
    def count(self) -> int:
        """How many slices the cells take (their repetitions: tries, runs)."""
        ...

    def run(self, index: int) -> Iterator[CellResult]:
        """Slice ``index`` (0 first): one result per cell it measures, its samples that slice's only.

        A cell may be measured in one slice only (a measurement that cannot
        be cut); its result is then kept as it is.
        """
        ...

    def notes(self, cell: CellSpec, parts: Sequence[CellResult]) -> Mapping[str, Any]:
        """The notes of ``cell``'s merged result, from its slices that succeeded (in slice order)."""
        ...

    def close(self) -> None:
        """Stop whatever the session kept between slices (workers, servers); also after an interrupt."""
        ...


@runtime_checkable
class SlicedRunner(Protocol):
    """An external runner that can measure its cells one slice at a time (optional: see the module docstring)."""

    def slices(self, cells: Sequence[CellSpec], workdir: Path) -> SliceSession: ...


def slice_rounds(count: int, floor: int) -> list[int]:
    """The Python round after which each of ``count`` slices runs: spread evenly over rounds ``0 .. floor - 1``.

    Every Python cell takes ``floor`` rounds, so these rounds happen in any
    run with Python cells; three slices over six rounds follow rounds 1, 3
    and 5 (round 0 calibrates and is the longest, so the first slice already
    falls well inside the run). More slices than rounds share rounds.
    """
    return [-(-(index + 1) * max(1, floor) // count) - 1 for index in range(count)]


def merge_slices(cell: CellSpec, parts: Sequence[tuple[int, CellResult]],
                 notes: Callable[[CellSpec, Sequence[CellResult]], Mapping[str, Any]]) -> CellResult:
    """One result of a cell's slices, given as ``(round label, result)`` in slice order.

    Every metric's samples are concatenated, each carrying its slice's round,
    so the summary is of per-round values (slices after the same round make
    one value) and the flag is judged on them; the rest comes from the first
    slice that succeeded, the notes from the suite. A cell measured in one
    slice keeps that result. With a failed slice the cell is ``failed``, its
    error names the slice, and the other slices' values stay.
    """
    if len(parts) == 1:
        return parts[0][1]
    duration = sum(part.duration_s or 0.0 for _, part in parts)
    failed = [(index, label, part) for index, (label, part) in enumerate(parts) if not part.ok]
    good = [(label, part) for label, part in parts if part.ok]
    if not good:
        return replace(parts[0][1], duration_s=duration)
    samples: dict[str, list[float]] = {}
    rounds: dict[str, list[int]] = {}
    for label, part in good:
        for name, measured in part.metrics.items():
            samples.setdefault(name, []).extend(measured.samples)
            rounds.setdefault(name, []).extend([label] * len(measured.samples))
    metrics = {name: MetricResult.of(values, rounds[name]) for name, values in samples.items()}
    first = good[0][1]
    judged = first.judged_metric
    flags = tuple(instability(metrics[judged].summary, counted="rounds", metric=judged)) if judged in metrics \
        else first.flags
    merged = replace(first, metrics=metrics, flags=flags, duration_s=duration, group=cell.group,
                     notes={**notes(cell, [part for _, part in good]), "slice_rounds": [label for label, _ in parts]})
    if not failed:
        return merged
    index, label, part = failed[0]
    more = f" ({len(failed)} of {len(parts)} slices failed)" if len(failed) > 1 else ""
    return replace(merged, status="failed", integrity=part.integrity or merged.integrity,
                   error=f"slice {index + 1} of {len(parts)} (after round {label}) failed: {part.error}{more}")


@dataclass
class _Suite:
    session: SliceSession
    cells: Sequence[CellSpec]
    schedule: list[int]
    parts: dict[str, list[tuple[int, CellResult]]] = field(default_factory=dict)
    done: int = 0

    @property
    def finished(self) -> bool:
        return self.done >= self.session.count


class SlicedRun:
    """The slices of every sliced suite of a run: opened before the rounds, taken between them, merged at the end.

    Parameters
    ----------
    floor
        The rounds every Python cell takes (:func:`slice_rounds`).
    record
        Writes one merged cell result (the run's sink and progress).
    started
        Told the first cell of each slice before it runs (progress).
    """

    def __init__(self, floor: int, record: Callable[[CellResult], None],
                 started: Callable[[CellSpec], None] = lambda spec: None) -> None:
        self.floor = floor
        self.record = record
        self.started = started
        self.suites: list[_Suite] = []

    def open(self, runner: SlicedRunner, cells: Sequence[CellSpec], workdir: Path) -> None:
        """Open ``runner``'s session for ``cells``; a runner that cannot open fails every cell with its reason."""
        try:
            session = runner.slices(cells, workdir)
        except StratabenchError as error:
            for cell in cells:
                self.record(CellResult.failure(cell, status_of(error), error.message))
            return
        self.suites.append(_Suite(session, cells, slice_rounds(session.count, self.floor) if session.count else []))

    def after_round(self, number: int) -> None:
        """Take every slice scheduled after Python round ``number``, labelled with it."""
        for suite in self.suites:
            while not suite.finished and suite.schedule[suite.done] <= number:
                self._take(suite, number)

    def finish(self, next_label: int) -> None:
        """Take the slices no round reached, the suites' alternating, labelled from ``next_label`` on; merge all."""
        label = next_label
        while any(not suite.finished for suite in self.suites):
            for suite in self.suites:
                if not suite.finished:
                    self._take(suite, label)
            label += 1
        self.close()

    def close(self) -> None:
        """Write every cell with a slice so far, merged, and close the sessions (after an interrupt too)."""
        suites, self.suites = self.suites, []
        try:
            for suite in suites:
                self._write(suite)
        finally:
            for suite in suites:
                suite.session.close()

    def _take(self, suite: _Suite, label: int) -> None:
        index, pending = suite.done, {cell.name: cell for cell in suite.cells}
        suite.done += 1
        self.started(suite.cells[0])
        try:
            for result in suite.session.run(index):
                if pending.pop(result.cell, None) is not None:
                    suite.parts.setdefault(result.cell, []).append((label, result))
        except StratabenchError as error:
            # The slice failed as a whole: each cell it had not measured yet carries the reason for this slice.
            for cell in pending.values():
                suite.parts.setdefault(cell.name, []).append(
                    (label, CellResult.failure(cell, status_of(error), error.message)))
        if suite.finished:
            self._write(suite)

    def _write(self, suite: _Suite) -> None:
        for cell in suite.cells:
            parts = suite.parts.pop(cell.name, None)
            if parts:
                self.record(merge_slices(cell, parts, suite.session.notes))


def slices_back_to_back(runner: SlicedRunner, cells: Sequence[CellSpec], workdir: Path) -> list[CellResult]:
    """Every slice of ``runner``'s cells, one after the other, each cell merged as a run merges it.

    A suite's whole measurement where no rounds spread its slices (its
    ``run_external``, for ``stratabench ab``): the slices are labelled 0, 1,
    ... as rounds, a failed slice keeps the others' values, and a session
    that cannot open fails every cell with its reason.
    """
    results: list[CellResult] = []
    sliced = SlicedRun(1, results.append)
    sliced.open(runner, cells, workdir)
    sliced.finish(0)
    return results
