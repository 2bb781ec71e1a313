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

Slices past the floor (a session that can take them: :class:`MoreSlices`)
-----------------------------------------------------------------------
The floor of a session's ``count`` slices gives each cell an interval that
is the whole range of its values, so one far value flags it: a Go cell's
six processes mostly sit within a few percent of its median, and one of
1.1-1.5x flagged 10-33 of the default run's 38 Go cells. A Python cell in
that state asks the run's allowance for rounds up to nine or twelve, whose
intervals drop one or two values at each end
(:mod:`stratabench.engine.sampling`). A session that can measure a chosen
few of its cells in one more slice (``run_more``: a ``stratabench-go``
process of only those cells, a treestore slice of only those tests from the
workers kept since the first, one more parking run on the kept server) asks the same way, by the same rule: after
its floor each cell is judged by
:class:`~stratabench.engine.rounds.CellRounds`, whose floor is the
session's ``count``, whose cap is the run's ``allowance_rounds`` (12) and
whose budget is the floor, so that every slice past it is asked for
(:meth:`~stratabench.engine.rounds.CellRounds.ask`: up to the fewest of 9
and 12 that could meet the target, and none when neither could). A cell's
visit costs what the last slice took per cell measured, beyond the cells'
own time (a Go process's lines carry none: its whole share, its start
too). The asks are granted cheapest first from an allowance of the slices'
own (as the paired verdicts' rounds have theirs, so that neither the
Python cells nor the slices starve the other): the run's share
(``run_allowance``, 10%) of the slices' own wall time until the first
ask, the floor's slices, so the slices past the floor add about that
share to the slices' time (in a default run the Go processes' 16 s and
the treestore and parking slices' 18 s: about 3.4 s). A session whose
floor is more slices than the rounds every Python cell takes (the Go
cells' nine processes over six rounds) has its slices past the rounds
follow the later rounds, one a round, or come after the rounds, each
its own round (:func:`slice_rounds`). The slices past the
floor follow the later Python rounds, one a round, each of only the cells
still going, and after the rounds (or without them) one after the other,
each its own round label; a cell that meets the target, or reaches what
was granted and cannot be granted more, stops. A cell that fails in a
slice past the floor keeps every other slice's values and is ``failed``
naming that slice, as with a failed floor slice. A fixed count
(``--samples``), and ``stratabench ab`` (:func:`slices_back_to_back`),
take the floor only.

Measured against main (45d8b78) under the lock, default runs A then B
(load 1.2-1.6), then B then A (load 1.2-1.7): 19 and 13 of 38 Go cells
flagged on main, 7 and 11 here (15 and 16 cells took nine processes, 2
and 0 twelve; 21 of the 31 met the target), the Go processes 16.2 and
15.7 s against 19.2 and 19.0 s, the runs 192 and 189 s against 195 and
195 s. A share of the run's time instead of the slices'
(5 s in a ``run bulkload``, 15 s in a default run) bought more than the
slices past nine could give: ``run bulkload`` (load 1.5-1.8) took 75 s
against main's 68 s, its Go processes 22.3 s against 15.8 s (three of 24
cells at 1.6-1.8 s each, three of 2 cells at 0.2 s), and flagged 20 of 38
Go cells against 27. What stays flagged is spread between processes:
each process has a speed common to its cells (in that run the first
process was the fastest for 33 of 36 cells), which nine values narrow but
seldom within ±5% (:mod:`stratabench.suites.bulkload.go`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from stratabench.engine.cell import status_of
from stratabench.engine.operation import CellSpec
from stratabench.engine.rounds import CellRounds, cell_key
from stratabench.engine.sampling import Allowance, RoundPlan
from stratabench.errors import StratabenchError
from stratabench.options import EngineOptions
from stratabench.results.records import CellResult, MetricResult
from stratabench.results.stats import instability

__all__ = ["MoreSlices", "SliceSession", "SlicedRunner", "SlicedRun", "merge_slices", "slice_rounds",
           "slices_back_to_back"]


@runtime_checkable
class SliceSession(Protocol):
    """One suite's slices of one run: ``count`` of them, each run when the engine asks, then closed."""

    @property
    def count(self) -> int:
        """How many slices every cell takes (their repetitions: tries, runs): the floor, which a
        :class:`MoreSlices` session may take past for cells that miss the target."""
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
class MoreSlices(Protocol):
    """A session that can take slices past its ``count`` of only some cells (optional: the module docstring)."""

    def run_more(self, index: int, cells: Sequence[CellSpec]) -> Iterator[CellResult]:
        """Slice ``index`` (``count`` or later) of ``cells`` only: as :meth:`SliceSession.run`, for those cells."""
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
    falls well inside the run). More slices than rounds never share one: two
    slices after one round would be one value of the cell (its samples are
    summarized per round), so slice ``i`` follows round ``i``, and those past
    the floor follow the rounds the cells still sampling take, or come after
    the rounds, each its own label (:meth:`SlicedRun.finish`).
    """
    floor = max(1, floor)
    if count > floor:
        return list(range(count))
    return [-(-(index + 1) * floor // count) - 1 for index in range(count)]


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
    """One session's slices: its cells, the round each floor slice follows, each cell's parts and, for a session
    that can take slices past the floor, each cell's rounds (``states``) and the cells still going."""

    session: SliceSession
    cells: Sequence[CellSpec]
    schedule: list[int]
    states: dict[str, CellRounds] | None = None
    parts: dict[str, list[tuple[int, CellResult]]] = field(default_factory=dict)
    done: int = 0
    #: The cells that take the next slice past the floor (judged after each slice from the floor's last on).
    going: list[CellSpec] = field(default_factory=list)
    #: The round label of the last slice taken: a slice past the floor follows a later round.
    last_label: int = -1
    #: The last slice's wall time per cell measured beyond the cells' own (nanoseconds), for the asks' costs.
    visit_ns: float = 0.0
    #: A slice was taken since the cells were last judged.
    unjudged: bool = False

    @property
    def floor_done(self) -> bool:
        return self.done >= self.session.count

    @property
    def finished(self) -> bool:
        return self.floor_done and not self.going


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
    options
        The run's engine options, for slices past the floor (the module
        docstring): the stopping rule's target and cap, the allowance's
        share; ``None`` or a fixed count (``samples``) takes the floor only.
    now
        The clock (seconds) that times each slice, for the allowance.
    """

    def __init__(self, floor: int, record: Callable[[CellResult], None],
                 started: Callable[[CellSpec], None] = lambda spec: None, *,
                 options: EngineOptions | None = None, now: Callable[[], float] = time.monotonic) -> None:
        self.floor = floor
        self.record = record
        self.started = started
        self.options = options if options is not None and options.samples is None else None
        self.now = now
        #: The slices' own wall time so far (seconds): what the allowance is a share of (the module docstring).
        self.sliced_s = 0.0
        self.allowance = Allowance(options.run_allowance if options is not None else 0.0)
        self.suites: list[_Suite] = []

    def open(self, runner: SlicedRunner, cells: Sequence[CellSpec], workdir: Path) -> None:
        """Open ``runner``'s session for ``cells``; a runner that cannot open fails every cell with its reason."""
        try:
            session = runner.slices(cells, workdir)
        except StratabenchError as error:
            for cell in cells:
                self.record(CellResult.failure(cell, status_of(error), error.message))
            return
        suite = _Suite(session, cells, slice_rounds(session.count, self.floor) if session.count else [])
        if self.options is not None and isinstance(session, MoreSlices) and session.count:
            # The floor is the session's count and the cell's whole budget: every slice past it is asked for.
            options = self.options
            cap = max(session.count, min(options.max_samples, options.allowance_rounds))
            floored = replace(options, min_samples=session.count, max_samples=cap, cell_budget_ns=0)
            suite.states = {cell_key(cell): CellRounds(cell, floored) for cell in cells}
        self.suites.append(suite)

    def after_round(self, number: int) -> None:
        """Take every slice scheduled after Python round ``number``, labelled with it: the floor's, then one past
        the floor (of the cells still going) if the suite's last slice followed an earlier round."""
        for suite in self.suites:
            while not suite.floor_done and suite.schedule[suite.done] <= number:
                self._take(suite, number)
            if suite.floor_done and suite.going and suite.last_label < number:
                self._take(suite, number)
        self._judge()

    def finish(self, next_label: int) -> None:
        """Take the slices no round reached, the suites' alternating, labelled from ``next_label`` on; merge all."""
        label = next_label
        while taken := [suite for suite in self.suites if not suite.finished]:
            for suite in taken:
                self._take(suite, label)
            self._judge()
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
        index, past_floor = suite.done, suite.floor_done
        cells = suite.going if past_floor else suite.cells
        pending = {cell.name: cell for cell in cells}
        suite.done += 1
        suite.last_label = label
        self.started(cells[0])
        began, own_s = self.now(), 0.0

        def add(cell: CellSpec, result: CellResult) -> None:
            nonlocal own_s
            own_s += result.duration_s or 0.0
            suite.parts.setdefault(cell.name, []).append((label, result))
            if suite.states is not None:
                state = suite.states[cell_key(cell)]
                state.add(result, RoundPlan(label, result.loops, 1, state.measured == 0))

        try:
            results = suite.session.run_more(index, cells) if past_floor and isinstance(suite.session, MoreSlices) \
                else suite.session.run(index)
            for result in results:
                if (cell := pending.pop(result.cell, None)) is not None:
                    add(cell, result)
        except StratabenchError as error:
            # The slice failed as a whole: each cell it had not measured yet carries the reason for this slice.
            for cell in pending.values():
                add(cell, CellResult.failure(cell, status_of(error), error.message))
            pending.clear()
        # What the slice spent per cell beyond the cells' own time (the cell's CellRounds adds its own): a Go
        # process's lines carry no time of their own, so a visit costs the whole process's share, its start too.
        took_s = self.now() - began
        self.sliced_s += took_s
        suite.visit_ns = max(0.0, took_s - own_s) * 1e9 / max(1, len(cells) - len(pending))
        if suite.states is not None and suite.floor_done:
            # A cell the slice did not measure (one measured whole, in one slice) takes no slice past the floor.
            suite.going = [cell for cell in cells if cell.name not in pending]
            suite.unjudged = True
        if suite.finished:
            self._write(suite)

    def _judge(self) -> None:
        """After a slice at or past a suite's floor: its cells that stop end; the asks of every suite are granted
        together, cheapest first, from the slices' allowance (the module docstring)."""
        judged: dict[str, tuple[_Suite, CellRounds]] = {}
        for suite in self.suites:
            if suite.unjudged and suite.states is not None:
                suite.unjudged = False
                judged.update((cell_key(cell), (suite, suite.states[cell_key(cell)])) for cell in suite.going)
        if not judged:
            return
        stops = {key: state.stop() for key, (_, state) in judged.items()}
        asks = [ask for key, (suite, state) in judged.items()
                if (ask := state.ask(stops[key], key, suite.visit_ns)) is not None]
        for ask in self.allowance.grant(asks, self.sliced_s * 1e9):
            judged[ask.key][1].granted = ask.rounds
            stops[ask.key] = None
        for suite in {id(suite): suite for suite, _ in judged.values()}.values():
            suite.going = [cell for cell in suite.going if stops[cell_key(cell)] is None]
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
