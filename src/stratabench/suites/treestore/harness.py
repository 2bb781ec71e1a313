"""Runs the 22 tests on one backend at one size, in one process (docs/studies/treestore.md §7.1, §8.2).

Per backend × N: install the module (after removing earlier data of the
run's namespace), run the tests in table order, uninstall, and remove the
namespace. Each test yields one :class:`Outcome` with every try's raw time
in nanoseconds. Before each timed block the garbage collector runs and
the heap is frozen (``gc.freeze``) until the block ends. A test that fails (a server gone, an integrity mismatch)
yields its one-line error, and the next test still runs.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from stratabench.engine.measure import frozen_heap
from stratabench.errors import IntegrityError, StratabenchError
from stratabench.systems.treestore.backends.base import OPERATIONAL, RUNNING, TreeBackend
from stratabench.suites.treestore.catalog import TESTS, Fixture, TreeTest
from stratabench.systems.treestore.core import Core, stored_tree
from stratabench.systems.treestore.cores import DEFAULT_CORE
from stratabench.suites.treestore.dataset import Dataset, document_hash
from stratabench.systems.treestore.tree import Inner, tree_hash

__all__ = ["Outcome", "run_backend"]


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
             warmup: int = 0) -> Outcome:
    """Setup, tries (before, timed, check, after), teardown; errors end the test, not the run."""
    outcome = Outcome(test, data.n, expected_hash=data.hashes[test.check[1]])
    fixture: Fixture | None = None
    total = warmup + tries
    try:
        fixture = test.setup(core, data)
        for attempt in range(total):
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
            if attempt >= warmup:
                outcome.samples_ns.append(elapsed)
            # Reads are checked on every try; stored state after the first and the last (it is O(N)).
            if test.check[0] == "result" or attempt in (warmup, total - 1):
                actual = outcome.actual_hash = _actual(core, test, fixture, result)
                outcome.checks += 1
                if actual != outcome.expected_hash:
                    raise IntegrityError(f"try {attempt + 1 - warmup}: {test.check[0]} hashes "
                                         f"{actual[:12]}, expected {data.hashes[test.check[1]][:12]}")
            del result
            if test.after is not None:
                test.after(fixture, data)
        test.teardown(fixture, data)
        fixture = None
    except StratabenchError as exc:
        outcome.error = exc.message
        _close_quietly(fixture)
    return outcome


def run_backend(backend: TreeBackend, n: int, *, tries: int = 10, tries_for: Mapping[int, int] | None = None,
                fresh_state: bool = False, warmup: int = 0,
                tests: Iterable[TreeTest] = TESTS, core_name: str = DEFAULT_CORE) -> Iterator[Outcome]:
    """Install, run ``tests`` in order, uninstall and clean up; one outcome per test.

    ``tests`` may be lazy (the worker's tests come as the parent asks for
    them): each is taken only when the previous one has been reported.

    ``tries_for`` overrides the tries of single tests by number (the default
    run gives test 11 fewer). The backend's namespace is removed at the end
    whatever happened. ``core_name`` picks the commit core (:mod:`stratabench.systems.treestore.cores`).
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
                yield Outcome(test, n, error=exc.message)
            return
        for test in tests:
            yield run_test(core, test, data, tries=overrides.get(test.number, tries),
                           fresh_state=fresh_state, warmup=warmup)
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
