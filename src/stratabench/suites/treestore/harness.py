"""Runs the 22 tests on one backend at one size, in one process (docs/studies/treestore.md §7.1, §8.2).

Per backend × N: install the module (after removing earlier data of the
run's namespace), run the tests in table order, uninstall, and remove the
namespace. Each test yields one :class:`Outcome` with every try's raw time
in nanoseconds. Before each timed block the garbage collector runs and
the heap is frozen (``gc.freeze``) until the block ends; a slice that takes
several short tries (:class:`SliceFill`) keeps it frozen over all of them, so
each collection walks only what the slice made. A test that fails (a server gone, an integrity mismatch)
yields its one-line error, and the next test still runs.

A default run gives a test whose tries repeat one measurement :class:`MoreTries`: past its
tries it takes more, by the engine's stopping rule (:class:`~stratabench.engine.sampling.StoppingRule`:
the floor of six, then until the median's interval is within the target), while its tries (every
untimed step included) stay within a budget, so a test of a few milliseconds gets a narrow interval
and a costly one keeps its tries (docs/studies/treestore.md §8.2).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field

from stratabench.engine.measure import frozen_heap
from stratabench.engine.sampling import StoppingRule
from stratabench.options import EngineOptions
from stratabench.errors import IntegrityError, StratabenchError
from stratabench.systems.treestore.backends.base import OPERATIONAL, RUNNING, TreeBackend
from stratabench.suites.treestore.catalog import TESTS, Fixture, TreeTest
from stratabench.systems.treestore.core import Core, stored_tree
from stratabench.systems.treestore.cores import DEFAULT_CORE
from stratabench.suites.treestore.dataset import Dataset, document_hash
from stratabench.systems.treestore.tree import Inner, tree_hash

__all__ = ["Asked", "MoreTries", "Outcome", "SliceFill", "run_backend"]


@dataclass(frozen=True)
class SliceFill:
    """A slice's timed tries of a short test: past its least, until their count × median reaches ``timed_ns``.

    At most ``max_tries``. The slice's value is their median (the engine's per-round value), so a test
    of a fraction of a millisecond is not one try at the machine's mercy, and a try of ``timed_ns`` or
    more stays one try. The median, not the sum, sets the count: one slow try (a burst of the machine)
    does not end the slice with the tries it has.
    """

    timed_ns: int
    max_tries: int

    def filled(self, samples_ns: list[int]) -> bool:
        return len(samples_ns) * statistics.median(samples_ns) >= self.timed_ns or len(samples_ns) >= self.max_tries

    def to_json(self) -> dict[str, int]:
        return {"timed_ns": self.timed_ns, "max_tries": self.max_tries}


@dataclass(frozen=True)
class Asked:
    """A test asked for with its own tries and untimed tries first: one slice of a run.

    ``untimed_limit_ns``: the last untimed try, if it takes longer, is kept as the first timed one
    (:func:`run_test`); ``fill``: more timed tries past ``tries`` while it asks for them.
    """

    test: TreeTest
    tries: int
    warmup: int
    untimed_limit_ns: int | None = None
    fill: SliceFill | None = None


@dataclass(frozen=True)
class MoreTries:
    """Tries past the least, until the median's interval is within ``target`` or ``budget_ns`` is spent.

    The budget counts whole tries (before, timed block, check, after, a warm-up try); it is also the
    time past which three tries are enough (a try of a third of it or more gets no more).
    """

    target: float
    budget_ns: int
    max_tries: int = 40

    def rule(self) -> StoppingRule:
        return StoppingRule(EngineOptions(max_samples=self.max_tries, target=self.target,
                                          cell_budget_ns=self.budget_ns, max_sample_ns=self.budget_ns))

    def to_json(self) -> dict[str, float | int]:
        return {"target": self.target, "budget_ns": self.budget_ns, "max_tries": self.max_tries}


@dataclass
class Outcome:
    """One test's result on one backend and size."""

    test: TreeTest
    n: int
    samples_ns: list[int] = field(default_factory=list)
    error: str | None = None
    expected_hash: str | None = None
    actual_hash: str | None = None
    checks: int = 0
    warmup: int = 0
    more: MoreTries | None = None
    target_missed: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


def _actual(core: Core, test: TreeTest, fixture: Fixture, result: object) -> str:
    kind = test.check[0]
    if kind == "result":
        if isinstance(result, (int, str)):
            return document_hash(result)
        assert result is None or isinstance(result, Inner)
        return tree_hash(result)
    if kind == "running":
        return tree_hash(stored_tree(core, RUNNING))
    return tree_hash(stored_tree(core, OPERATIONAL, fixture.session.owner))


def _close_quietly(fixture: Fixture | None) -> None:
    if fixture is None:
        return
    for conn in (*fixture.extra, fixture.conn):
        try:
            conn.close()
        except StratabenchError:
            pass


def run_test(core: Core, test: TreeTest, data: Dataset, *, tries: int, fresh_state: bool = False,
             warmup: int = 0, more: MoreTries | None = None, untimed_limit_ns: int | None = None,
             fill: SliceFill | None = None) -> Outcome:
    """Setup, tries (before, timed, check, after), teardown; errors end the test, not the run.

    ``warmup`` tries run first and are not kept; with ``more`` or ``fill``, tries go on past ``tries``
    while its rule asks for them. The last untimed try, when it takes longer than ``untimed_limit_ns``, is kept
    as the first timed try instead: an untimed try of a costly test would double its cost, and a
    costly test's try 1 differs from its later ones by a few percent only (treestore's
    ``UNTIMED_TRY_LIMIT_NS``). The outcome's ``warmup`` counts the tries left untimed.
    """
    outcome = Outcome(test, data.n, expected_hash=data.hashes[test.check[1]], warmup=warmup, more=more)
    rule = None if more is None else more.rule()
    fixture: Fixture | None = None
    try:
        fixture = test.setup(core, data)
        started = time.perf_counter_ns()  # what ``more`` counts: every try from here, a warm-up's included
        attempt = 0
        while True:
            if fresh_state and attempt > 0:
                test.teardown(fixture, data)
                fixture = None
                fixture = test.setup(core, data)
            if test.before is not None:
                test.before(fixture, data)
            # The heap the setup built (trees of N nodes, caches) is frozen for the timed block, so
            # the collector does not rescan it: a C core like sysrepo's has no such cost. The worker
            # is not a zygote's child, so nothing is frozen before and the block unfreezes it all:
            # dropped trees (their nodes point at their parents) are collected between tries.
            with frozen_heap():
                start = time.perf_counter_ns()
                result = test.timed(fixture, data)
                elapsed = time.perf_counter_ns() - start
            last = False
            if attempt == warmup - 1 and untimed_limit_ns is not None and elapsed > untimed_limit_ns:
                warmup = outcome.warmup = attempt  # too costly to repeat untimed: this try is the first timed one
            if attempt >= warmup:
                outcome.samples_ns.append(elapsed)
                last = len(outcome.samples_ns) >= tries
                if last and fill is not None:
                    last = fill.filled(outcome.samples_ns)
                if last and rule is not None:
                    stop = rule.stop(outcome.samples_ns, time.perf_counter_ns() - started)
                    last = stop is not None
                    outcome.target_missed = stop is not None and stop.target_missed
            # Reads are checked on every try; stored state after the first and the last (it is O(N)).
            if test.check[0] == "result" or attempt == warmup or last:
                actual = outcome.actual_hash = _actual(core, test, fixture, result)
                outcome.checks += 1
                if actual != outcome.expected_hash:
                    raise IntegrityError(f"try {attempt + 1 - warmup}: {test.check[0]} hashes "
                                         f"{actual[:12]}, expected {data.hashes[test.check[1]][:12]}")
            del result
            if test.after is not None:
                test.after(fixture, data)
            if last:
                break
            attempt += 1
        test.teardown(fixture, data)
        fixture = None
    except StratabenchError as exc:
        outcome.error = exc.message
        _close_quietly(fixture)
    return outcome


def run_backend(backend: TreeBackend, n: int, *, tries: int = 10, tries_for: Mapping[int, int] | None = None,
                fresh_state: bool = False, warmup: int = 0, more: MoreTries | None = None,
                tests: Iterable[TreeTest | Asked] = TESTS, core_name: str = DEFAULT_CORE) -> Iterator[Outcome]:
    """Install, run ``tests`` in order, uninstall and clean up; one outcome per test.

    ``tests`` may be lazy (the worker's tests come as the parent asks for
    them): each is taken only when the previous one has been reported.

    ``tries_for`` overrides the tries of single tests by number (the default
    run gives test 11 fewer). The backend's namespace is removed at the end
    whatever happened. ``core_name`` picks the commit core (:mod:`stratabench.systems.treestore.cores`).

    ``more`` (a default run) goes to the tests whose tries repeat one measurement; those of them that an
    untimed try leaves as they were also get one first, when ``warmup`` adds none: a cold try 1 (1.2-1.9×
    the next on a read) would otherwise be a third of their least tries.

    An :class:`Asked` test runs with its own tries and untimed tries, in
    any order and as often as asked (the slices of a run).
    """
    data = Dataset(n)
    overrides = dict(tries_for or {})
    core: Core | None = None
    try:
        try:
            core = Core(backend, core=core_name)
            core.install()
        except StratabenchError as exc:
            for test in tests:
                yield Outcome(test.test if isinstance(test, Asked) else test, n, error=exc.message)
            return
        for test in tests:
            if isinstance(test, Asked):
                # A slice that fills takes up to 21 short tries: with the heap frozen for all of them, the
                # collection before each timed block walks only what the slice made, not the whole heap
                # (2-9 ms a try at N=1,000, ten times a read's timed block).
                with frozen_heap() if test.fill is not None else nullcontext():
                    outcome = run_test(core, test.test, data, tries=test.tries, fresh_state=fresh_state,
                                       warmup=test.warmup, untimed_limit_ns=test.untimed_limit_ns, fill=test.fill)
                yield outcome
                continue
            repeats = more is not None and test.tries_repeat(fresh_state)
            warm = 1 if repeats and not warmup and test.warm_up_changes_nothing(fresh_state) else warmup
            yield run_test(core, test, data, tries=overrides.get(test.number, tries), fresh_state=fresh_state,
                           warmup=warm, more=more if repeats else None)
    finally:
        if core is not None:
            try:
                core.uninstall()
                core.close()
            except StratabenchError:
                pass
        try:
            backend.cleanup()
        except StratabenchError:
            pass
