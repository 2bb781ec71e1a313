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
from stratabench.services.session import local_services
from stratabench.suites.treestore.backends import TREE_BACKENDS
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


def test_a_server_killed_mid_run_fails_only_its_own_cells_in_one_line(services_state: str, tmp_path: Path) -> None:
    with local_services(["redis"]) as running:
        service = running["redis"]
        options = RunOptions(suites=("treestore",), stores=(service.url,), run_id="killed-run",
                             settings={"treestore.sizes": "10", "treestore.backends": "json-file,redis,sqlite"})
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
    for result in by_backend["redis"][9:]:
        assert result.error is not None and "\n" not in result.error
        assert result.error.startswith("redis at redis://127.0.0.1:") and "still running" in result.error


def _alive(pids: tuple[int, ...]) -> bool:
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        return True
    return False
