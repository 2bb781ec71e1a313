"""The treestore backends beside a user's data on real servers, and a server killed mid-run.

A run keeps to its own namespace: a user's Redis keys and MongoDB
collections in the same servers survive it untouched. A server that dies
fails the cells that need it, each with a one-line error, and the
other backends' cells still run.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stratabench.options import RunOptions
from stratabench.redact import password_of
from stratabench.services.session import local_services
from stratabench.systems.treestore.backends import TREE_BACKENDS
from stratabench.suites.treestore.catalog import TESTS
from stratabench.suites.treestore.harness import run_backend
from stratabench.suites.treestore.suite import TreestoreSuite

pytestmark = pytest.mark.server

SOME_TESTS = [test for test in TESTS if test.number in (3, 9, 12, 17)]


def test_a_users_redis_keys_survive_a_run(server_url: Callable[[str], str]) -> None:
    import redis

    url = server_url("redis")
    client: Any = redis.Redis.from_url(url)
    try:
        client.set("user:config", b"keep me")
        client.hset("sbts:someone-else:running:perf:data:/perf:cont", mapping={"n": "cont"})
        outcomes = list(run_backend(TREE_BACKENDS.get("redis")("survive", url=url), 10, tries=2, tests=SOME_TESTS))
        assert all(outcome.ok for outcome in outcomes), [outcome.error for outcome in outcomes]
        assert client.get("user:config") == b"keep me"
        assert client.hgetall("sbts:someone-else:running:perf:data:/perf:cont") == {b"n": b"cont"}
        assert list(client.scan_iter(match="sbts:survive:*")) == []
    finally:
        client.delete("user:config", "sbts:someone-else:running:perf:data:/perf:cont")
        client.close()


def test_a_users_mongodb_collection_survives_a_run(server_url: Callable[[str], str]) -> None:
    import pymongo

    url = server_url("mongodb")
    client: Any = pymongo.MongoClient(url)
    try:
        client["user_app"]["settings"].insert_one({"_id": "theme", "value": "dark"})
        # A collection named like ours, in a database of the user's: not ours either.
        client["user_app"]["perf"].insert_one({"_id": "/perf:cont", "n": "cont"})
        outcomes = list(run_backend(TREE_BACKENDS.get("mongodb")("survive", url=url), 10, tries=2,
                                    tests=SOME_TESTS))
        assert all(outcome.ok for outcome in outcomes), [outcome.error for outcome in outcomes]
        assert client["user_app"]["settings"].find_one({"_id": "theme"}) == {"_id": "theme", "value": "dark"}
        assert client["user_app"]["perf"].count_documents({}) == 1
        assert not [name for name in client.list_database_names() if name.startswith("sbts_survive")]
    finally:
        client.drop_database("user_app")
        client.close()


def test_mongodb_query_heavy_tests_complete_at_moderate_n(server_url: Callable[[str], str]) -> None:
    """``create user ordered items`` (with its "delete the list" cleanup) and ``remove all items`` at N = 500.

    On FerretDB's SQLite backend every successor lookup and descendant
    delete read the whole collection, and a store hit its 60 s socket
    timeout at N = 1,000. Functional, not a speed target: each try finishes
    within the cell's limit and its stored state matches the core's tree.
    """
    url = server_url("mongodb")
    tests = [test for test in TESTS if test.number in (8, 12)]
    began = time.monotonic()
    outcomes = list(run_backend(TREE_BACKENDS.get("mongodb")("moderate", url=url), 500, tries=2, tests=tests))
    took = time.monotonic() - began
    assert [outcome.test.number for outcome in outcomes] == [8, 12]
    assert all(outcome.ok for outcome in outcomes), [outcome.error for outcome in outcomes]
    assert all(outcome.checks > 0 and len(outcome.samples_ns) == 2 for outcome in outcomes)
    assert outcomes[1].expected_hash == outcomes[1].actual_hash  # the list is gone from the store
    assert took < RunOptions().engine.cell_timeout_s * len(tests), f"{took:.0f} s"


@pytest.mark.parametrize("backend", ["redis", "mongodb"])
def test_the_incremental_core_stores_on_real_servers_what_the_studys_core_stores(
        server_url: Callable[[str], str], backend: str) -> None:
    """Every write test on the incremental core: each stored state hashes as the study's core leaves it."""
    url = server_url(backend)
    tests = [test for test in TESTS if test.number in (7, 9, 12, 13, 15, 16, 17, 18, 20, 22)]
    outcomes = list(run_backend(TREE_BACKENDS.get(backend)("incremental", url=url), 30, tries=2, tests=tests,
                                core_name="incremental"))
    assert [outcome.test.number for outcome in outcomes] == [test.number for test in tests]
    assert all(outcome.ok and outcome.checks > 0 for outcome in outcomes), [outcome.error for outcome in outcomes]
    assert all(outcome.actual_hash == outcome.expected_hash for outcome in outcomes)


def test_a_server_killed_mid_run_fails_only_its_own_cells_in_one_line(services_state: str, tmp_path: Path) -> None:
    with local_services(["redis"]) as running:
        service = running["redis"]
        options = RunOptions(suites=("treestore",), stores=(service.url,), run_id="killed-run",
                             settings={"treestore.sizes": "10", "treestore.backends": "json-file,redis,sqlite",
                                       "treestore.cores": "sysrepo"})
        suite = TreestoreSuite(options)
        results = []
        for result in suite.run_external(suite.cells(), tmp_path):
            results.append(result)
            if result.params["backend"] == "redis" and result.params["test"] == 9:
                for pid in service.pids:
                    os.kill(pid, signal.SIGKILL)
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and _alive(service.pids):
                    time.sleep(0.05)
    by_backend = {backend: [r for r in results if r.params["backend"] == backend] for backend in
                  ("json-file", "redis", "sqlite")}
    assert all(r.ok for r in by_backend["json-file"] + by_backend["sqlite"])
    redis_ok = [r.ok for r in by_backend["redis"]]
    assert redis_ok[:9] == [True] * 9 and not any(redis_ok[9:])
    secret = password_of(service.url)
    for result in by_backend["redis"][9:]:
        assert result.error is not None and "\n" not in result.error
        assert result.error.startswith("redis at redis://") and "still running" in result.error
        assert "127.0.0.1:" in result.error and (not secret or secret not in result.error)


def _alive(pids: tuple[int, ...]) -> bool:
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        return True
    return False
