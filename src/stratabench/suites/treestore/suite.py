"""The treestore suite: cells per backend × N × test (× state mode), one worker per backend × N.

The 22 tests of a backend and size share one worker process, as they share
sysrepo's test program: setup once, tries with state carried across them
(docs/studies/treestore.md §7.3), one interval per try. So the engine's calibrated loops do not
apply; the cells are handed to :meth:`TreestoreSuite.run_external`, which
starts ``python -m stratabench.suites.treestore.worker`` per group and turns
each line it writes into the result of one cell, with every try's raw time.

Backends: the embedded ones always (``json-file`` baseline, ``sqlite``;
``sqlite@disk`` in the full grid or when named); ``redis`` and ``mongodb``
when the run has a Redis or MongoDB-wire URL (``--services local`` or
``--store``), with ``redis+search`` beside ``redis``.

``run treestore --full`` runs the reference grid: sizes 1,000 / 10,000 /
100,000 with 10 tries everywhere. Settings (``--set treestore.NAME=VALUE``):
``sizes``, ``tries``, ``tries_many_subs`` (test 11), ``state`` (``sysrepo``,
``fresh-state`` or ``both``), ``backends``, ``warmup``, ``cores``.

A default run (no ``tries`` given, not ``--full``) takes 3 tries a test, and
more where they are cheap and repeat one measurement (:class:`~.harness.MoreTries`,
docs/studies/treestore.md §8.2). The tests that consume their precondition
(12-15, 19-22) do their work on try 1 only in the ``sysrepo`` mode: their
tries are not repeats, so no interval over them is judged; the cell says so
(:data:`~stratabench.report.generic.NOT_REPEATS`) instead of being flagged.

Two commit cores (:mod:`.cores`): the study's ``sysrepo`` core, on which the
reproduction is judged, and ``incremental`` (path copying, validation of
the change), whose cells carry the suffix ``@incremental``. The reads
(tests 1-6) commit nothing in their timed block, so they run the same code
on both cores and are measured on ``sysrepo`` only. Each test runs on every
backend and core back to back, so the two cores are compared side by side.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from stratabench.datasets.verify import Integrity
from stratabench.engine.operation import CellSpec, Operation
from stratabench.errors import StratabenchError, UsageError
from stratabench.layers.stores.namespaces import treestore_namespace
from stratabench.report.generic import NOT_REPEATS
from stratabench.results.records import CellResult, MetricResult, Status
from stratabench.results.stats import instability
from stratabench.settings import Setting
from stratabench.suites import SUITES
from stratabench.suites.kit.stores import real_url, run_stores
from stratabench.suites.kit.suite import Suite
from stratabench.systems.treestore.backends import TREE_BACKENDS
from stratabench.suites.treestore.catalog import TESTS, TreeTest, family_of
from stratabench.suites.treestore.harness import MoreTries, SliceFill
from stratabench.systems.treestore.cores import CORES, DEFAULT_CORE

__all__ = ["FULL_SIZES", "LANGUAGE", "TreestoreSuite"]

LANGUAGE = "python-worker"
"""The cells' ``language``: Python, measured by the study's own worker rather than the engine's loop."""

FULL_SIZES = (1000, 10_000, 100_000)
ORDER = ("json-file", "mongodb", "redis", "sqlite", "sqlite@disk", "redis+search")
"""The reference's order (json-file, MongoDB, Redis), then the extensions (docs/studies/treestore.md §7.1)."""
STATE_SUFFIX = {"sysrepo": "", "fresh-state": "@fresh-state"}
#: Tries per test in a default run: the fewest that ``compare --fail-above`` can judge (fewer than three a side
#: fail the gate as "cannot judge"), so a gate over two default runs can pass. Test 11 (0.4-0.6 s a try)
#: had one and the others two; three cost about 4.5 s more. The study's claims still need six (ENOUGH) and
#: rest on ten (``run treestore --full``), so a default run does not judge them.
DEFAULT_TRIES = 3
#: What ``--set treestore.tries_budget=SECONDS`` suggests spending on one test's tries past its three: a test of a
#: few milliseconds a try gets the tries its median's interval needs, one of a third of it or more keeps three.
#: A default run does not: the extra tries are taken back to back in one worker, in one window of the machine, so
#: their interval narrows without the run's drift. With 0.1 s a test (44 of 76 cells took 3-40 tries), two
#: back-to-back default runs on dc4e90f, under the lock, had `compare --fail-above 1.10` call 19 and 14 treestore
#: cells slower (1.10-1.84x, the machine's swing between the runs) and exit 1, where three tries a cell had left
#: them inconclusive; the flags it saved (50 to 4-13 of 76) are the symptom of the same one-window sampling.
MORE_TRIES_BUDGET_NS = 100_000_000

READS = range(1, 7)
"""Tests whose timed block commits nothing: the same code on every core, so measured on the study's only."""


def _numbers(text: str, name: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.replace("_", "").split(",") if part.strip())
    except ValueError:
        raise UsageError(f"--set treestore.{name}={text!r}: use whole numbers separated by commas") from None
    if not values or min(values) < 2:
        raise UsageError(f"--set treestore.{name}={text!r}: sizes must be at least 2")
    return values


@SUITES.register("treestore")
class TreestoreSuite(Suite):
    """One JSON file against per-node databases fed by diffs (sysrepo's datastore plugins)."""

    full_grid = "N = 1,000, 10,000 and 100,000, 10 tries per test (sysrepo's published grid)"
    settings = (
        Setting("treestore.sizes", "", "dataset sizes N, comma-separated; empty: --size, else 1,000 "
                "(run --full: 1,000, 10,000 and 100,000)"),
        Setting("treestore.tries", "", f"tries per test, exactly; empty: {DEFAULT_TRIES} (run --full: 10)", "whole",
                minimum=1, maximum=10_000),
        Setting("treestore.tries_budget", "0", "seconds a test may spend on tries past its three where they repeat "
                f"and are cheap (0: none; {MORE_TRIES_BUDGET_NS / 1e9:g} is a start); they run back to back, so their "
                "interval leaves out the run's drift", "number", minimum=0, maximum=60),
        Setting("treestore.tries_many_subs", "", f"tries of 'many oper change_subs' (20 commits × 12 subscribers, "
                f"most of the run's time); empty: as tries, at most {DEFAULT_TRIES} (run --full: as tries)", "whole",
                minimum=1, maximum=10_000),
        Setting("treestore.state", "sysrepo", "state across tries: sysrepo (the reference's), fresh-state "
                "(setup before every try), or both", "text", ("sysrepo", "fresh-state", "both")),
        Setting("treestore.backends", "", "backends, comma-separated; empty: every one this run can reach"),
        Setting("treestore.tests", "", f"only these tests, by number, comma-separated (e.g. 6,8,9,17; each runs "
                f"its own setup, so any subset keeps the reference's state semantics); empty: all {len(TESTS)}"),
        Setting("treestore.cores", ",".join(CORES), "commit cores, comma-separated: sysrepo (the study's: deep copy "
                "of the cache, whole-tree validation; the reproduction is judged on it) and incremental (path "
                "copying, validation of the change; tests 7-22)"),
        Setting("treestore.warmup", "0", "discarded tries after each setup; changes the state of the tries, "
                "so such cells are named @warmupK", "whole", minimum=0, maximum=1_000),
    )

    # -- the plan ------------------------------------------------------------

    @property
    def full(self) -> bool:
        return self.options.full

    def sizes(self) -> tuple[int, ...]:
        if self.config.given("treestore.sizes") and self.config.text("treestore.sizes"):
            return _numbers(self.config.text("treestore.sizes"), "sizes")
        if self.options.size is not None:
            return (self.options.size,)
        return FULL_SIZES if self.full else (1000,)

    def tries(self) -> tuple[int, int]:
        """(tries per test, tries of test 11)."""
        tries = self.config.whole("treestore.tries") if self.config.given("treestore.tries") else (10 if self.full else DEFAULT_TRIES)
        if tries < 1:
            raise UsageError("--set treestore.tries must be at least 1")
        if self.config.given("treestore.tries_many_subs"):
            return tries, self.config.whole("treestore.tries_many_subs")
        return tries, tries if self.full else min(tries, DEFAULT_TRIES)

    def more_tries(self) -> MoreTries | None:
        """More tries where they are cheap, with ``treestore.tries_budget``; ``None`` without one, when the tries
        are given or ``--full`` (see :data:`MORE_TRIES_BUDGET_NS` for why a default run takes none)."""
        budget_ns = int(self.config.number("treestore.tries_budget") * 1e9)
        if budget_ns <= 0 or self.full or self.config.given("treestore.tries"):
            return None
        return MoreTries(self.options.engine.target, budget_ns)

    def tests(self) -> list[TreeTest]:
        """The tests to run, in table order (``treestore.tests``, else all)."""
        text = self.config.text("treestore.tests")
        if not text.strip():
            return list(TESTS)
        try:
            wanted = {int(part) for part in text.split(",") if part.strip()}
        except ValueError:
            wanted = set()
        known = {test.number for test in TESTS}
        if not wanted or not wanted <= known:
            raise UsageError(f"--set treestore.tests={text!r}: use test numbers 1 to {len(TESTS)} separated by "
                             "commas, e.g. 6,8,9,17")
        return [test for test in TESTS if test.number in wanted]

    def cores(self) -> tuple[str, ...]:
        """The commit cores to measure, the study's first."""
        text = self.config.text("treestore.cores")
        named = [name.strip() for name in text.split(",") if name.strip()]
        unknown = [name for name in named if name not in CORES]
        if not named or unknown:
            raise UsageError(f"--set treestore.cores={text!r}: use {' and/or '.join(CORES)}, separated by commas")
        return tuple(name for name in CORES if name in named)

    def states(self) -> tuple[str, ...]:
        state = self.config.text("treestore.state")
        return ("sysrepo", "fresh-state") if state == "both" else (state,)

    def backends(self) -> list[tuple[str, str | None]]:
        """(backend, redacted URL or None) in the reference's order."""
        named = [name.strip() for name in self.config.text("treestore.backends").split(",") if name.strip()]
        for name in named:
            TREE_BACKENDS.info(name)  # an unknown name is a one-line error listing the known ones
        servers = run_stores(self.options, kind="server")
        chosen: list[tuple[str, str | None]] = []
        for name in ORDER:
            if named and name not in named:
                continue
            service = TREE_BACKENDS.info(name).cls.service
            if service is None:
                if name == "sqlite@disk" and not (named or self.full):
                    continue
                chosen.append((name, None))
                continue
            urls = [store.url for store in servers if store.service == service]
            if urls:
                chosen.append((name, urls[0]))
            elif named:
                chosen.append((name, None))  # its worker reports that it needs a server
        return chosen

    def cells(self) -> list[CellSpec]:
        tries, many = self.tries()
        warmup = self.config.whole("treestore.warmup")
        cells = []
        # Listed in the order they are measured: per N and state mode, each test on every core and backend in turn.
        backends = self.backends()
        cores = self.cores()
        for n in self.sizes():
            for state in self.states():
                suffix = STATE_SUFFIX[state] + (f"@warmup{warmup}" if warmup else "")
                for test in self.tests():
                    for core in cores:
                        if core != DEFAULT_CORE and test.number in READS:
                            continue
                        for backend, url in backends:
                            params = {"backend": backend, "n": n, "test": test.number, "test_name": test.name,
                                      "family": family_of(test.number), "state": state, "warmup": warmup,
                                      "tries": many if test.number == 11 else tries, "store": url, "core": core}
                            name = f"{backend}/{n}/{test.number:02d}-{test.slug}{suffix}"
                            cells.append(self.spec(name if core == DEFAULT_CORE else f"{name}@{core}", params,
                                                   language=LANGUAGE))
        return cells

    def prepare(self, cell: CellSpec, workdir: Path) -> Operation:
        raise StratabenchError(f"{cell.name}: treestore cells run in the study's own worker, not the engine loop")

    # -- measuring -------------------------------------------------------------

    def namespace(self, backend: str, n: int, state: str, core: str = DEFAULT_CORE) -> str:
        """The namespace of one worker's backend (:func:`~stratabench.layers.stores.namespaces.treestore_namespace`)."""
        return treestore_namespace(self.options.run_id, backend, n, state, core)

    def run_external(self, cells: Sequence[CellSpec], workdir: Path) -> Iterator[CellResult]:
        """One worker per backend × N × state mode; the workers of one N and mode run interleaved.

        Every backend's worker of a round (one N and state mode) is started
        and installs its module first; then each test runs on every backend
        back to back before the next test starts. Load drifting on a shared
        machine over the minutes of a round then falls on all backends
        alike instead of on whichever ran last.
        """
        for workers in self._workers(cells):
            try:
                for worker in workers:
                    worker.start(workdir)
                for worker in workers:
                    yield from worker.ready()
                for number in _numbers_of(workers):
                    for worker in workers:
                        yield from worker.run(number)
                for worker in workers:
                    yield from worker.finish()
            finally:
                for worker in workers:
                    worker.close()

    def slices(self, cells: Sequence[CellSpec], workdir: Path) -> TreestoreSlices:
        """The cells' tries one at a time, each between two rounds of the run (:class:`TreestoreSlices`)."""
        return TreestoreSlices(self._workers(cells), workdir, sliced=self.more_tries() is None and not self.full)

    def _workers(self, cells: Sequence[CellSpec]) -> list[list[_Worker]]:
        """The workers of each round (one N and state mode): one per backend × core, not started yet."""
        rounds: dict[tuple[Any, ...], dict[tuple[Any, ...], list[CellSpec]]] = {}
        for cell in cells:
            p = cell.params
            rounds.setdefault((p["n"], p["state"], p["warmup"]), {}).setdefault(
                (p["backend"], p["store"], p.get("core", DEFAULT_CORE)), []).append(cell)
        return [[_Worker(self._job(backend, n, state, warmup, store, group, core), group,
                         self.options.engine.cell_timeout_s * len(group))
                 for (backend, store, core), group in groups.items()]
                for (n, state, warmup), groups in rounds.items()]

    def _job(self, backend: str, n: int, state: str, warmup: int, store: str | None,
             group: Sequence[CellSpec], core: str = DEFAULT_CORE) -> dict[str, Any]:
        tries = {cell.params["test"]: cell.params["tries"] for cell in group}
        usual = max(set(tries.values()), key=list(tries.values()).count)
        more = self.more_tries()
        return {"more": None if more is None else more.to_json(), "backend": backend, "url": real_url(self.options, store) if store else None,
                "namespace": self.namespace(backend, n, state, core), "n": n, "tries": usual, "core": core,
                "tries_for": {str(k): v for k, v in tries.items() if v != usual},
                "fresh_state": state == "fresh-state", "warmup": warmup, "tests": sorted(tries)}


#: A repeated test's untimed try that takes longer than this is timed itself (the worker keeps it): an untimed try
#: would double the slice's cost ("many oper change_subs", 0.4-0.9 s a try, is most of the phase), and its try 1
#: differs from its later ones by a few percent only. Every other test's tries take a few ms at most.
UNTIMED_TRY_LIMIT_NS = 100_000_000

#: A slice's timed tries of a repeated test: past one, until their count × median reaches 10 ms (at most 21 tries);
#: the slice's value is their median. One try of a read (0.03-0.7 ms at N=1,000) or of "create an item" (0.2-4 ms)
#: was at the mercy of one burst of the machine: cells under 10 ms a try were 7-15 of the 9-18 flagged in four
#: default runs of 45d8b78 (their max/min over the three slices 1.10-3.3). A test of 10 ms or more keeps one try a
#: slice. 20 ms (at most 31) cost about twice the time: 25-100 ms a slice of a cell, setup included.
SLICE_FILL = SliceFill(timed_ns=10_000_000, max_tries=21)


def _numbers_of(workers: Sequence[_Worker]) -> list[int]:
    return sorted({number for worker in workers for number in worker.by_test})


def _repeats(cell: CellSpec) -> bool:
    return next(test for test in TESTS if test.number == cell.params["test"]).tries_repeat(
        cell.params["state"] == "fresh-state")


class TreestoreSlices:
    """A run's treestore cells a slice at a time: slice ``i`` is a value of every test that repeats one measurement.

    The workers start (and fill their backends) in the first slice and wait
    on their input between slices, idle; each slice asks every worker for
    its tests in table order, each test on every backend
    back to back, as a run without slices does. A test's slice runs from its
    own setup and first takes an untimed try (unless that try costs more
    than :data:`UNTIMED_TRY_LIMIT_NS`: it is then the timed one), so every
    slice times a later try, the same measurement. The first slice timed
    try 1 before, which is not: tests 7-10 leave their container behind after
    try 1, so their try 1 was faster than the next (first slice ÷ the later
    two's median 0.93, p10 0.61, over 96 such values of six default runs of
    09371b4), and a read's try 1 is cold (1.05, p90 1.65, over 72): one such
    value among three is the interval's whole range. A slice's value is one
    timed try of a test of 10 ms or more; a shorter test takes tries until
    they time 10 ms (count × median, at most 21: :data:`SLICE_FILL`) and
    the slice's value is their median (each try still timed alone, as the
    study times it). Tests whose tries do not repeat
    (:data:`~stratabench.report.generic.NOT_REPEATS`) run whole in the first
    slice, state carried across their tries, as without slices. A run with
    ``treestore.tries_budget`` or ``--full`` (the study's grid: the state
    carried across all ten tries) is not sliced: it runs whole in the first
    slice.

    Past the floor (:meth:`run_more`, a :class:`~stratabench.engine.slices.MoreSlices`):
    a repeated test whose interval misses the target takes more slices, as
    the engine's stopping rule asks and the slices' allowance grants
    (engine/slices.py), each one more slice of only those cells from the
    same workers, which therefore stay (idle) until the session closes and
    end by their input (uninstalling) there. Measured under the lock (load
    1.1-2.2): ``run treestore parking``, main then this, then this then
    main, flagged 12 and 22 of 76 treestore cells on main against 9 and 19
    (7 and 9 cells took nine or twelve slices; treestore's cells took 1.5-2.5 s
    more, 16.8 and 19.8 s against 15.3 and 17.3 s), and a second such
    pair 26 and 7 against 17 and 9: within the runs' own swing. Default
    runs, main then this (load 2.0-2.2), then this then main (load
    1.2-1.8): the Go cells' cheaper asks take most of the allowance first,
    so no treestore cell took a slice past the floor in the first pair and
    four took nine in the second; 7 and 6 of 76 flagged against main's 9
    and 17, the runs 206.7 and 196.7 s against 202.6 and 203.5 s. B's
    median in A's interval (each side's two runs, both ways): 53 and 56 of
    76 here, 49 and 51 on main, short of 85% either way. Most of that
    shortfall is the floor's three values themselves: B's median of three
    lands inside A's min-max of three in only about 60% of cells when the
    two runs are one population (a simulation; dealing each repeated cell's
    six per-slice values of a pair of runs at random to the two sides gave
    27-29 of 44 held, 5-95% 21-34), so with three slices no worker plan
    brings the 44 repeated cells near 85%. Measured under the lock (load
    1.1-2.8), ``run treestore`` runs of e8f0da3 held 23-30 of 44, inside
    that band: there is no run factor that three slices can show; default
    runs of last night held 21-23, at its lower edge. With six slices
    (``--set treestore.tries=6``, 27-28 s a run against 20 s with three)
    the band is 34-41 of 44 and a run factor shows (21-40 held, the runs
    1-4% apart in geomean). It is not the workers' hash seed, which stays
    the same in every slice of a run: runs with PYTHONHASHSEED 1, 2, 1, 2
    held 21 and 35 with the same seed, 23-35 with different seeds; nor
    clearly their address-space layout: with ASLR off (``setarch -R``) and
    a fixed seed, so that every run's workers had the same layout and seed,
    four runs held 31-40, and interleaved with usual runs (R N R N) the two
    such runs held 36 and 30, the two usual ones 20 and 26, and each usual
    run against each such run (different layouts) 32-37. What moves a
    run's cells together is then the machine over the run's half minute,
    not the process. Earlier (``run treestore parking``, whose slices
    follow each other): six slices cost 6.6-6.9 s more a run and held 23
    and 24 of 44 repeated cells across two runs against 15 and 19 with
    three; a fresh worker for every slice (beside the slices past the
    floor) made the run 5.5-6.2 s longer than main's, against 2.3-3.1 s
    without, and held 27 and 22 against main's 29 and 25: neither was kept.
    """

    def __init__(self, rounds: list[list[_Worker]], workdir: Path, *, sliced: bool) -> None:
        self.rounds, self.workdir, self.sliced = rounds, workdir, sliced

    @property
    def count(self) -> int:
        tries = [int(cell.params["tries"]) for workers in self.rounds for worker in workers
                 for cell in worker.by_test.values() if _repeats(cell)]
        return max(tries, default=1) if self.sliced else 1

    def run(self, index: int) -> Iterator[CellResult]:
        for workers in self.rounds:
            if index == 0:
                for worker in workers:
                    worker.start(self.workdir)
                for worker in workers:
                    yield from worker.ready()
            for number in _numbers_of(workers):
                for worker in workers:
                    yield from self._slice(worker, number, index)
            if not self.sliced:
                for worker in workers:
                    yield from worker.finish()

    def run_more(self, index: int, cells: Sequence[CellSpec]) -> Iterator[CellResult]:
        """One slice past the floor of ``cells`` only (those the engine still wants: engine/slices.py), from the
        workers kept since the first slice, each test on every backend back to back as in a floor slice."""
        wanted = {cell.name for cell in cells}
        for workers in self.rounds:
            for number in _numbers_of(workers):
                for worker in workers:
                    cell = worker.by_test.get(number)
                    if cell is not None and cell.name in wanted and self.sliced and _repeats(cell):
                        yield from self._ask_slice(worker, number)

    def _slice(self, worker: _Worker, number: int, index: int) -> Iterator[CellResult]:
        cell = worker.by_test.get(number)
        if cell is None:
            return
        if not self.sliced or not _repeats(cell):
            if index == 0:
                yield from worker.run(number)
            return
        if index < int(cell.params["tries"]):
            yield from self._ask_slice(worker, number)

    def _ask_slice(self, worker: _Worker, number: int) -> Iterator[CellResult]:
        # The cell stays owed after its floor's last slice: the engine may ask for more (run_more) until close.
        cell = worker.by_test[number]
        result = yield from worker.ask(number, tries=1, warmup=int(cell.params["warmup"]) + 1,
                                       untimed_limit_ns=UNTIMED_TRY_LIMIT_NS, fill=SLICE_FILL)
        if result is not None:
            yield result

    def notes(self, cell: CellSpec, parts: Sequence[CellResult]) -> dict[str, Any]:
        samples = [sample for part in parts if "wall_ns" in part.metrics for sample in part.metrics["wall_ns"].samples]
        untimed = sum(int(part.notes.get("warmup_tries", 0)) for part in parts)
        notes = {key: value for key, value in parts[0].notes.items() if key != "warmup_tries"}
        notes.update(tries=len(samples), integrity_checks=sum(int(part.notes.get("integrity_checks", 0)) for part in parts),
                     slice_tries="a slice's value is one try, or the median of its tries until they time "
                                 f"{SLICE_FILL.timed_ns / 1e6:g} ms (at most {SLICE_FILL.max_tries}), "
                                 "each slice after its own setup and "
                                 + ("an untimed try" if untimed >= len(parts) else
                                    "an untimed try where it costs little (a try over 0.1 s is timed itself)"))
        if untimed:
            notes["untimed_tries"] = untimed
        if samples:
            notes["mean_ns"] = sum(samples) / len(samples)
        return notes

    def close(self) -> None:
        """End every worker: those still running uninstall and clean up (a sliced session keeps them until here,
        for the slices past the floor), then stop."""
        for workers in self.rounds:
            for worker in workers:
                try:
                    if self.sliced:
                        worker.end()
                finally:
                    worker.close()


class _Worker:
    """One backend's worker process of a round: started, asked for one test at a time, finished.

    Its time limit (``--cell-timeout`` × its cells) counts only the time it
    is asked to work, not the time it waits while other backends run.
    """

    def __init__(self, job: dict[str, Any], cells: Sequence[CellSpec], limit_s: float) -> None:
        self.job = job
        self.by_test = {cell.params["test"]: cell for cell in cells}
        self.limit_s = limit_s
        self.busy_s = 0.0
        self.killed = False
        self.header: dict[str, Any] = {}
        self.process: subprocess.Popen[str] | None = None
        self.errors: IO[str] | None = None

    @property
    def label(self) -> str:
        return f"treestore worker for {self.job['backend']} at N={self.job['n']} ({self.job.get('core', DEFAULT_CORE)} core)"

    def start(self, workdir: Path) -> None:
        self.errors = tempfile.TemporaryFile("w+", dir=workdir)  # a file, so a chatty worker never blocks on a full pipe
        self.process = subprocess.Popen([sys.executable, "-m", "stratabench.suites.treestore.worker"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors,
                                        text=True, cwd=workdir)
        self._send(self.job)

    def _send(self, message: dict[str, Any]) -> bool:
        assert self.process is not None and self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(message) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        return True

    def _next(self) -> dict[str, Any] | None:
        """The next record that is not the header (kept), within what is left of the time limit; None at the end."""
        assert self.process is not None and self.process.stdout is not None
        watchdog = threading.Timer(max(self.limit_s - self.busy_s, 0.001), self._expire)
        started = time.monotonic()
        watchdog.start()
        try:
            while line := self.process.stdout.readline():
                record: dict[str, Any] = json.loads(line)
                if "header" in record:
                    self.header = record["header"]
                else:
                    return record
            return None
        finally:
            watchdog.cancel()
            self.busy_s += time.monotonic() - started

    def _expire(self) -> None:
        self.killed = True
        self.kill()

    def _fail_rest(self, status: Status, reason: str) -> Iterator[CellResult]:
        for cell in self.by_test.values():
            yield CellResult.failure(cell, status, reason)
        self.by_test.clear()

    def ready(self) -> Iterator[CellResult]:
        """Wait until the module is installed (or the backend refused to open)."""
        record = self._next()
        if record is None:
            yield from self._ended()
        elif "unavailable" in record or "failed" in record:
            status: Status = "unavailable" if "unavailable" in record else "failed"
            yield from self._fail_rest(status, record.get(status) or "")

    def run(self, number: int) -> Iterator[CellResult]:
        """Ask for one test and turn its line into the cell's result."""
        cell = self.by_test.get(number)
        if cell is None:
            return
        started = time.monotonic()
        record = self._next() if self._send({"test": number}) else None
        if record is None or "test" not in record:
            yield from self._ended()
            return
        yield _result(self.by_test.pop(record["test"]), record, self.header, time.monotonic() - started)

    def ask(self, number: int, *, tries: int, warmup: int,
            untimed_limit_ns: int | None = None,
            fill: SliceFill | None = None) -> Generator[CellResult, None, CellResult | None]:
        """Ask for one slice of a test (its cell stays owed); ``return`` its result, ``None`` if the worker ended.

        A worker that ended yields the failure of every cell it still owes.
        """
        cell = self.by_test[number]
        started = time.monotonic()
        asked = {"test": number, "tries": tries, "warmup": warmup, "untimed_limit_ns": untimed_limit_ns,
                 "fill": None if fill is None else fill.to_json()}
        record = self._next() if self._send(asked) else None
        if record is None or "test" not in record:
            yield from self._ended()
            return None
        return _result(cell, record, self.header, time.monotonic() - started)

    def finish(self) -> Iterator[CellResult]:
        """End of input: the worker uninstalls and exits; cells it never reported fail with its reason."""
        assert self.process is not None and self.process.stdin is not None
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=max(self.limit_s - self.busy_s, 1.0))
        except subprocess.TimeoutExpired:
            self._expire()
        yield from self._ended()

    def end(self) -> None:
        """End of input once its cells need nothing more (a sliced session's close): it uninstalls and exits; a
        worker that already ended, or never started, is left as it is."""
        if self.process is not None and self.process.poll() is None:
            self.by_test.clear()  # every result it owed has been reported, slice by slice
            for _ in self.finish():
                pass

    def _ended(self) -> Iterator[CellResult]:
        assert self.process is not None
        try:
            self.process.wait(timeout=10)  # it closed its output: let it clean up and say why
        except subprocess.TimeoutExpired:
            self.kill()
        if self.process.returncode != 0:
            _remove_namespace(self.job)
        if not self.by_test:
            return
        assert self.errors is not None
        self.errors.seek(0)
        problem = self.errors.read().strip().splitlines()
        reason = (f"killed after {self.limit_s:g} s (--cell-timeout × tests)" if self.killed else
                  problem[-1] if problem else f"the worker ended with exit status {self.process.returncode}")
        yield from self._fail_rest("failed", f"{self.label}: {reason}")

    def kill(self) -> None:
        """Stop the process if it still runs (an abandoned run, a time limit), and reap it."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def close(self) -> None:
        self.kill()
        if self.process is not None:
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    try:
                        stream.close()
                    except OSError:
                        pass  # a worker that died left a request in the pipe's buffer: closing flushes it
        if self.errors is not None:
            self.errors.close()


def _remove_namespace(job: dict[str, Any]) -> None:
    """What a worker that died could not clean up: its backend's namespace (files, keys, databases)."""
    try:
        TREE_BACKENDS.get(job["backend"])(job["namespace"], url=job["url"]).cleanup()
    except StratabenchError:
        pass  # unreachable now (a killed server): nothing more can be done from here


def _result(cell: CellSpec, record: dict[str, Any], header: dict[str, Any], duration: float) -> CellResult:
    samples = [float(sample) for sample in record["samples_ns"]]
    metrics = {"wall_ns": MetricResult.of(samples)} if samples else {}
    integrity = None
    if record.get("actual"):
        integrity = Integrity(record["expected"], record["actual"],
                              None if record["expected"] == record["actual"] else "stored or read tree differs")
    # The worker's header (docs/studies/treestore.md §8.2: versions, layout, directories, pragmas, codec, subscribers) rides
    # with every cell, since each cell is a record of its own; the report shows it once, at the top.
    notes: dict[str, Any] = {"header": header, "tries": len(samples), "state": cell.params["state"],
                             "integrity_checks": record.get("checks", 0)}
    if record.get("warmup"):
        notes["warmup_tries"] = record["warmup"]
    if record.get("more"):
        notes["more_tries"] = record["more"]
    if samples:
        mean = sum(samples) / len(samples)
        median = metrics["wall_ns"].summary.median
        notes["mean_ns"] = mean
        if max(mean, median) > 2 * min(mean, median):
            notes["note"] = ("mean and median differ by more than 2×: only try 1 changes data here "
                             "(state carried across tries, as in sysrepo's test program)")
    repeats = next(test for test in TESTS if test.number == cell.params["test"]).tries_repeat(
        cell.params["state"] == "fresh-state")
    if samples and not repeats:
        notes[NOT_REPEATS] = _not_repeats(samples)
    error = record.get("error")
    status: Status = "ok" if error is None and (integrity is None or integrity.ok) else "failed"
    return CellResult(cell.suite, cell.name, dict(cell.params), cell.language, status, error,
                      loops=1 if samples else None, metrics=metrics, integrity=integrity, notes=notes,
                      duration_s=duration, flags=_flags(metrics, record) if repeats else (),
                      judged="wall_ns" if "wall_ns" in metrics else None)  # a try's process times the whole test


def _flags(metrics: dict[str, MetricResult], record: dict[str, Any]) -> tuple[str, ...]:
    """The study's tries are its samples: an interval they leave wide is flagged like any other, with the
    target and budget of the more tries it had (a default run), else against the usual limit."""
    if "wall_ns" not in metrics:
        return ()
    more = MoreTries(**record["more"]) if record.get("more") else None
    if more is None:
        return tuple(instability(metrics["wall_ns"].summary, counted="tries"))
    return tuple(instability(metrics["wall_ns"].summary, target=more.target, counted="tries",
                             target_missed=bool(record.get("target_missed")), budget_s=more.budget_ns / 1e9))


def _not_repeats(samples: Sequence[float]) -> str:
    """Why a consumer's tries in the sysrepo mode have no interval, with the figures that show it."""
    later = sorted(samples[1:])
    figures = f"try 1 {samples[0] / 1e6:.3g} ms"
    if later:
        figures += f", the {len(later)} later median {later[len(later) // 2] / 1e6:.3g} ms"
    return (f"only try 1 changes data in the sysrepo state mode, later tries commit no change ({figures}); "
            "the figure is the mean of the tries, as sysrepo's; state=fresh-state repeats the change")
