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
from stratabench.suites.treestore.harness import run_test
from stratabench.systems.treestore.schema import PERF

BY_NAME = {test.name: test for test in TESTS}


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
