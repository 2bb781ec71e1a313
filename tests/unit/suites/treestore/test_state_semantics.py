"""Spec §7.3: state carried across tries in the ``sysrepo`` mode, and rebuilt in ``fresh-state``.

SQLite's ``ns_meta.version`` counts the commits that stored something, so
it shows which tries changed data without any instrumentation.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from stratabench.systems.treestore.backends.base import RUNNING
from stratabench.systems.treestore.backends.sqlite import SqliteBackend
from stratabench.suites.treestore.catalog import TESTS, TreeTest
from stratabench.systems.treestore.core import Core, installed
from stratabench.suites.treestore.dataset import Dataset
from stratabench.suites.treestore.harness import MoreTries, Outcome, SliceFill, run_backend, run_test
from stratabench.systems.treestore.schema import PERF

BY_NAME = {test.name: test for test in TESTS}
BY_NUMBER = {test.number: test for test in TESTS}


@pytest.fixture
def core(tmp_path: Path) -> Iterator[Core]:
    with installed(SqliteBackend("state", directory=tmp_path)) as core:
        yield core


def stored_commits(core: Core) -> int:
    version = core.backend.data_version(core._admin, PERF, RUNNING)
    assert version is not None
    return int(version)


def commits_per_try(core: Core, test: TreeTest, tries: int, *, fresh_state: bool = False) -> int:
    before = stored_commits(core)
    outcome = run_test(core, test, Dataset(30), tries=tries, fresh_state=fresh_state)
    assert outcome.ok, outcome.error
    return stored_commits(core) - before


@pytest.mark.parametrize("name", ["remove all items", "remove whole subtree", "modify an item", "remove an item",
                                  "remove all items cached", "modify an item cached"])
def test_only_the_first_try_changes_data_in_the_sysrepo_mode(core: Core, name: str) -> None:
    test = BY_NAME[name]
    teardown_commits = 1 if test.teardown.__name__ == "tr" else 0
    # setup (1) + try 1 (1) + teardown; tries 2 and 3 are no-op commits that store nothing.
    assert commits_per_try(core, test, 3) == 2 + teardown_commits


def test_every_try_removes_all_items_in_the_fresh_state_mode(core: Core) -> None:
    # Each try: setup (1) and the removal (1).
    assert commits_per_try(core, BY_NAME["remove all items"], 3, fresh_state=True) == 6


def test_create_an_item_restores_its_precondition_so_every_try_works(core: Core) -> None:
    # setup, then per try: the untimed delete and the timed create, then the teardown.
    assert commits_per_try(core, BY_NAME["create an item"], 3) == 1 + 3 * 2 + 1


#: More tries that always stop at the floor of six: a cap of eight is below the next count (nine) whose
#: interval could be narrower, so six tries stop whatever their spread (no timing decides the count).
AT_THE_FLOOR = MoreTries(target=0.05, budget_ns=10**15, max_tries=8)


def outcomes(tmp_path: Path, numbers: list[int], more: MoreTries | None, *, fresh_state: bool = False,
             warmup: int = 0) -> dict[int, Outcome]:
    backend = SqliteBackend("more", directory=tmp_path)
    found = run_backend(backend, 30, tries=3, more=more, fresh_state=fresh_state, warmup=warmup,
                        tests=[BY_NUMBER[number] for number in numbers])
    return {outcome.test.number: outcome for outcome in found}


def test_more_tries_go_to_tests_whose_tries_repeat_with_a_warm_up_only_where_it_changes_no_state(
        tmp_path: Path) -> None:
    found = outcomes(tmp_path, [1, 9, 12, 16, 19], AT_THE_FLOOR)
    assert all(outcome.ok for outcome in found.values()), [o.error for o in found.values()]
    # (tries kept, warm-up tries): a read and 16 repeat from one state; 9 leaves its container after try 1
    # (a warm-up would change what try 1 sees); 12 and 19 do their work on try 1 only, so they keep three.
    assert {n: (len(o.samples_ns), o.warmup, o.more is not None) for n, o in found.items()} == {
        1: (6, 1, True), 9: (6, 0, True), 12: (3, 0, False), 16: (6, 1, True), 19: (3, 0, False)}


def test_in_the_fresh_state_mode_every_test_repeats_and_warms_up(tmp_path: Path) -> None:
    found = outcomes(tmp_path, [9, 12], AT_THE_FLOOR, fresh_state=True)
    assert {n: (len(o.samples_ns), o.warmup) for n, o in found.items()} == {9: (6, 1), 12: (6, 1)}


def test_given_tries_are_exact_and_a_spent_budget_keeps_three(tmp_path: Path) -> None:
    assert {n: (len(o.samples_ns), o.warmup) for n, o in outcomes(tmp_path, [1, 16], None).items()} == {
        1: (3, 0), 16: (3, 0)}
    # A budget of nothing: three tries (the least a cell keeps), flagged as missing the target.
    spent = outcomes(tmp_path, [1], MoreTries(target=0.05, budget_ns=0))[1]
    assert len(spent.samples_ns) == 3 and spent.target_missed
    # An explicit warm-up (cells named @warmupK) replaces the automatic one, it is not added to it.
    assert outcomes(tmp_path, [1], AT_THE_FLOOR, warmup=2)[1].warmup == 2


def test_a_warm_up_try_of_create_an_item_commits_like_a_timed_one(core: Core) -> None:
    # setup, then per try (the warm-up and six timed): the untimed delete and the create, then the teardown.
    before = stored_commits(core)
    outcome = run_test(core, BY_NAME["create an item"], Dataset(30), tries=3, warmup=1, more=AT_THE_FLOOR)
    assert outcome.ok and len(outcome.samples_ns) == 6
    assert stored_commits(core) - before == 1 + 7 * 2 + 1


@pytest.mark.parametrize(("limit_ns", "untimed", "commits"), [(10**12, 1, 1 + 2 * 2 + 1), (0, 0, 1 + 1 * 2 + 1)])
def test_an_untimed_try_over_its_limit_is_timed_itself(core: Core, limit_ns: int, untimed: int, commits: int) -> None:
    # A slice's one timed try after an untimed one: a cheap untimed try stays untimed (two tries, each an untimed
    # delete and a create); one that took longer than the limit is the timed try, and no second try runs.
    before = stored_commits(core)
    outcome = run_test(core, BY_NAME["create an item"], Dataset(30), tries=1, warmup=1, untimed_limit_ns=limit_ns)
    assert outcome.ok and len(outcome.samples_ns) == 1 and outcome.warmup == untimed
    assert stored_commits(core) - before == commits


def test_a_filling_slice_counts_tries_by_their_median_so_one_slow_try_does_not_end_it() -> None:
    fill = SliceFill(timed_ns=50, max_tries=10)
    assert not fill.filled([1, 1, 100])  # a burst in one try: three tries of about 1 time 3, not 102
    assert fill.filled([30, 20]) and fill.filled([1] * 10)


@pytest.mark.parametrize(("fill", "timed"), [(SliceFill(timed_ns=1, max_tries=9), 1),
                                             (SliceFill(timed_ns=10**12, max_tries=9), 9)])
def test_a_slice_takes_tries_until_they_fill_it(core: Core, fill: SliceFill, timed: int) -> None:
    # Each timed try of "create an item" is an untimed delete and a timed create: the tries commit as they run.
    before = stored_commits(core)
    outcome = run_test(core, BY_NAME["create an item"], Dataset(30), tries=1, warmup=1, fill=fill)
    assert outcome.ok and len(outcome.samples_ns) == timed
    assert stored_commits(core) - before == 1 + (1 + timed) * 2 + 1
