"""``stratabench clean`` after a crash: every namespace of a run goes, every sentinel of the user stays.

A "crash" is a store opened by a run, written to, and never cleaned up, as
when the run is killed with SIGKILL. Sentinels (:mod:`tests.sentinels`) are
the user's own data.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from stratabench.cli.main import main
from stratabench.errors import UsageError
from stratabench.layers.stores import STORES, open_store, store_for_scheme
from stratabench.layers.stores.base import Sweepable
from stratabench.layers.stores.namespaces import (
    RUN_IDENTIFIER_PATTERN,
    RUN_NAMESPACE_PATTERN,
    SWEEP_NAMESPACE,
    TREESTORE_DATABASE_PATTERN,
    TREESTORE_KEY_PATTERN,
    TREESTORE_NAMESPACE_PATTERN,
    cell_namespace,
    namespace_identifier,
    new_run_id,
    treestore_namespace,
)
from stratabench.options import RunOptions
from stratabench.redact import password_of
from tests.availability import unavailable
from tests.sentinels import SENTINELS, close_sentinel_clients  # noqa: F401 -- a fixture

pytestmark = pytest.mark.usefixtures("close_sentinel_clients")

SERVICE_OF = {"redis": "redis", "postgresql": "postgresql", "mysql": "mariadb", "mongodb": "mongodb"}


@pytest.fixture(params=sorted(SENTINELS))
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    name: str = request.param
    if not STORES.info(name).availability.ok:
        unavailable(f"store {name}: {STORES.info(name).availability.reason}")
    if name in SERVICE_OF:
        server_url: Callable[[str], str] = request.getfixturevalue("server_url")
        return server_url(SERVICE_OF[name])
    return {"sqlite": f"sqlite://{tmp_path}/user.db", "file": f"file://{tmp_path}/files",
            "lmdb": f"lmdb://{tmp_path}/user-lmdb"}[name]


def crash(url: str, cells: int = 2) -> list[str]:
    """What a killed run leaves: namespaces written to and never cleaned up."""
    options = RunOptions(run_id=new_run_id())
    namespaces = [cell_namespace(options, "matrix", f"put cell {n}") for n in range(cells)]
    for namespace in namespaces:
        store = open_store(url, namespace=namespace, options=options)
        store.put(b"one", b"1")
        for start in range(0, 500, 100):
            for n in range(start, start + 100):
                store.put(f"k{n}".encode(), b"x" * 100)
        store.close()  # and no cleanup()
    return namespaces


def shown_name(store_name: str, namespace: str) -> str:
    return namespace if store_name in ("redis", "file") else namespace_identifier(namespace, max_length=63)


def test_clean_removes_every_run_namespace_and_nothing_else(store_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    store_name = store_for_scheme(urlsplit(store_url).scheme)
    intact = SENTINELS[store_name](store_url)
    leftovers = crash(store_url)
    password = password_of(store_url)

    assert main(["clean", "--store", store_url, "--dry-run"]) == 0
    listing = capsys.readouterr().out
    for namespace in leftovers:
        assert f"would remove {shown_name(store_name, namespace)}" in listing
        with open_store(store_url, namespace=namespace) as store:
            assert store.get(b"one") == b"1", "a dry run removed something"

    assert main(["clean", "--store", store_url]) == 0
    done = capsys.readouterr().out
    assert all(f"removed {shown_name(store_name, namespace)}" in done for namespace in leftovers)
    assert not password or password not in listing + done
    assert intact(), f"{store_name}: a sentinel of the user did not survive clean"
    with open_store(store_url, namespace=SWEEP_NAMESPACE, sweeping=True) as sweeper:
        assert isinstance(sweeper, Sweepable)
        assert sweeper.list_namespaces() == []
    for namespace in leftovers:
        with open_store(store_url, namespace=namespace) as store:
            assert list(store.keys()) == []
            store.cleanup()
    assert main(["clean", "--store", store_url]) == 0
    assert "no namespaces of stratabench runs" in capsys.readouterr().out


def test_drop_refuses_a_name_that_is_not_a_run_namespace(store_url: str) -> None:
    SENTINELS[store_for_scheme(urlsplit(store_url).scheme)](store_url)  # the file or directory must exist
    with open_store(store_url, namespace=SWEEP_NAMESPACE, sweeping=True) as store:
        assert isinstance(store, Sweepable)
        for name in ("theirs", "stratabench_someone_else", 'x"; DROP TABLE theirs; --', "sb:*", "sbts:*",
                     "sbts:someone_else", "sbts_someone_else_running"):
            with pytest.raises(UsageError, match="not a namespace of a stratabench run"):
                store.drop_namespace(name)


def test_an_lmdb_environment_the_tool_made_goes_with_its_last_namespace(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    if not STORES.info("lmdb").availability.ok:
        unavailable(f"store lmdb: {STORES.info('lmdb').availability.reason}")
    url = f"lmdb://{tmp_path}/made-by-the-tool"
    crash(url)
    assert (tmp_path / "made-by-the-tool" / "data.mdb").is_file(), "the killed run left nothing: proves nothing"
    assert main(["clean", "--store", url]) == 0
    assert capsys.readouterr().out.count("removed stratabench_") == 2
    assert not (tmp_path / "made-by-the-tool").exists(), "clean left the tool's empty environment"

    with open_store(url, namespace="finished-run") as store:  # a run that ends normally
        store.put(b"k", b"v")
        store.cleanup()
    assert not (tmp_path / "made-by-the-tool").exists(), "a finished run left the tool's empty environment"

    assert main(["clean", "--store", url]) == 2
    assert "no LMDB environment there to clean" in capsys.readouterr().err
    assert not (tmp_path / "made-by-the-tool").exists(), "clean made what it was asked to clean"
    with pytest.raises(UsageError, match="does not exist"):
        open_store(f"lmdb://{tmp_path}/no/such/parent", namespace="x")


def test_an_sqlite_file_the_tool_made_goes_with_its_last_table(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite://{tmp_path}/made-by-the-tool.db"
    crash(url)
    assert (tmp_path / "made-by-the-tool.db").is_file(), "the killed run left nothing: proves nothing"
    assert main(["clean", "--store", url]) == 0
    assert capsys.readouterr().out.count("removed stratabench_") == 2
    assert sorted(tmp_path.iterdir()) == [], "clean left the tool's empty database file"
    with open_store(url, namespace="finished-run") as store:  # a run that ends normally
        store.put(b"k", b"v")
        store.cleanup()
    assert sorted(tmp_path.iterdir()) == [], "a finished run left the tool's empty database file"


def test_patterns_match_what_runs_write() -> None:
    namespace = cell_namespace(RunOptions(run_id=new_run_id()), "cache_tiers", "get redis zlib")
    assert RUN_NAMESPACE_PATTERN.match(namespace)
    assert RUN_IDENTIFIER_PATTERN.match(namespace_identifier(namespace))
    assert RUN_IDENTIFIER_PATTERN.match(namespace_identifier(namespace, max_length=64))
    assert RUN_NAMESPACE_PATTERN.match(cell_namespace(RunOptions(), "matrix", "x"))  # the API's default run id
    for other in ("someone-else", "20261122-101010-abcd", "t123-456", SWEEP_NAMESPACE, "nightly.matrix.0123456789"):
        assert not RUN_NAMESPACE_PATTERN.match(other)
        assert not RUN_IDENTIFIER_PATTERN.match(namespace_identifier(other))
    assert not RUN_NAMESPACE_PATTERN.match("20261122-101010-abcd.matrix")  # a table name cannot tell this one apart


def test_treestore_patterns_match_the_namespaces_its_workers_get() -> None:
    # What the backends write under a namespace is held to the patterns by the clean test below, on real servers.
    for run_id in (new_run_id(), "local"):
        for backend, n, state, core in (("json-file", 1000, "sysrepo", "sysrepo"), ("mongodb", 10, "fresh", "sysrepo"),
                                        ("redis+search", 100_000, "sysrepo", "incremental")):  # cut to 40 characters
            namespace = treestore_namespace(run_id, backend, n, state, core)
            assert TREESTORE_NAMESPACE_PATTERN.match(namespace), namespace
            assert TREESTORE_KEY_PATTERN.match(f"sbts:{namespace}")
            assert TREESTORE_DATABASE_PATTERN.match(f"sbts_{namespace}_operational")
    for other in ("someone_else", "survive", "20261122_101010_abcd", "nightly_redis_1000_ss"):
        assert not TREESTORE_NAMESPACE_PATTERN.match(other)
        assert not TREESTORE_KEY_PATTERN.match(f"sbts:{other}")
        assert not TREESTORE_DATABASE_PATTERN.match(f"sbts_{other}_running")


@pytest.mark.parametrize("backend", ["redis", "mongodb"])
def test_clean_removes_what_a_killed_treestore_worker_left(backend: str, server_url: Callable[[str], str],
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    url = server_url(backend)
    intact = SENTINELS[backend](url)
    namespace = treestore_namespace(new_run_id(), backend, 10, "sysrepo", "sysrepo")
    # A worker that installs its module and dies at once (os._exit): no uninstall, no cleanup, no close.
    worker = ("import os, sys\n"
              "from stratabench.systems.treestore.backends import TREE_BACKENDS\n"
              "from stratabench.systems.treestore.core import Core\n"
              "Core(TREE_BACKENDS.get(sys.argv[1])(sys.argv[2], url=sys.argv[3])).install()\n"
              "os._exit(0)\n")
    done = subprocess.run([sys.executable, "-c", worker, backend, namespace, url], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    leftover = f"sbts:{namespace}" if backend == "redis" else f"sbts_{namespace}_running"
    assert _treestore_names(backend, url, namespace), "the killed worker left nothing: proves nothing"

    assert main(["clean", "--store", url]) == 0
    assert f"removed {leftover}" in capsys.readouterr().out
    assert _treestore_names(backend, url, namespace) == []
    assert intact(), f"{backend}: a sentinel of the user did not survive clean"


def _treestore_names(backend: str, url: str, namespace: str) -> list[str]:
    """The keys (Redis) or databases (MongoDB) a treestore worker of ``namespace`` wrote."""
    if backend == "redis":
        import redis

        client: Any = redis.Redis.from_url(url)
        try:
            return sorted(key.decode() for key in client.scan_iter(match=f"sbts:{namespace}:*"))
        finally:
            client.close()
    import pymongo

    mongo: Any = pymongo.MongoClient(url)
    try:
        return sorted(name for name in mongo.list_database_names() if name.startswith(f"sbts_{namespace}_"))
    finally:
        mongo.close()


def test_memcached_says_it_relies_on_expiry(server_url: Callable[[str], str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["clean", "--store", server_url("memcached")]) == 0
    assert "memcached cannot list its keys; the items of a killed run expire" in capsys.readouterr().out
