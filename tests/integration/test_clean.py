"""``stratabench clean`` after a crash: every namespace of a run goes, every sentinel of the user stays.

A "crash" is a store opened by a run, written to, and never cleaned up, as
when the run is killed with SIGKILL. Sentinels are the user's own data,
written with the drivers directly, several of them named to look almost like
the tool's (``sb:someone-else:``, ``stratabench_someone_else``, a run id
without a cell).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from stratabench.cli.main import main
from stratabench.cli.run import new_run_id
from stratabench.errors import UsageError
from stratabench.layers.stores import STORES
from stratabench.layers.stores.base import (
    RUN_IDENTIFIER_PATTERN,
    RUN_NAMESPACE_PATTERN,
    SWEEP_NAMESPACE,
    Sweepable,
    namespace_identifier,
    open_store,
    store_for_scheme,
)
from stratabench.options import RunOptions
from stratabench.redact import password_of
from stratabench.suites.run_stores import cell_namespace
from tests.availability import unavailable

Check = Callable[[], bool]
# Driver clients the sentinels opened, closed after each test.
_CLIENTS: list[Any] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Any:
    yield
    while _CLIENTS:
        _CLIENTS.pop().close()

# -- the user's data, written with the drivers ------------------------------------


def _redis(url: str) -> Check:
    import redis

    client = redis.Redis.from_url(url)
    _CLIENTS.append(client)
    keys = [b"theirs:key", b"sb:someone-else:key", b"sb:20261122-101010-abcd:key",
            b"sb:20261122-101010-abcd.matrix.0123456789", b"xsb:20261122-101010-abcd.matrix.0123456789:k"]
    for key in keys:
        client.set(key, b"keep")
    return lambda: all(client.get(key) == b"keep" for key in keys)


def _postgresql(url: str) -> Check:
    import psycopg

    db = psycopg.connect(url, autocommit=True)
    _CLIENTS.append(db)
    db.execute("CREATE SCHEMA IF NOT EXISTS theirs")
    tables = ["theirs_table", "stratabench_someone_else", "stratabench_20261122_101010_abcd_matrix",
              # Run-shaped, but in a schema the tool never writes to.
              "theirs.stratabench_20261122_101010_abcd_matrix_0123456789_abcdef01"]
    for table in tables:
        db.execute(f"CREATE TABLE IF NOT EXISTS {table} (k text PRIMARY KEY, v text)")
        db.execute(f"INSERT INTO {table} VALUES ('k', 'keep') ON CONFLICT DO NOTHING")
    return lambda: all(db.execute(f"SELECT v FROM {t}").fetchall() == [("keep",)] for t in tables)


def _mysql(url: str) -> Check:
    import pymysql

    parts = urlsplit(url)
    db: Any = pymysql.connect(host=parts.hostname, port=parts.port, user=unquote(parts.username or ""),
                              password=unquote(parts.password or ""), database=parts.path.strip("/"),
                              autocommit=True)
    _CLIENTS.append(db)
    tables = ["theirs_table", "stratabench_someone_else"]
    with db.cursor() as cursor:
        for table in tables:
            cursor.execute(f"CREATE TABLE IF NOT EXISTS {table} (k VARCHAR(10) PRIMARY KEY, v TEXT)")
            cursor.execute(f"INSERT IGNORE INTO {table} VALUES ('k', 'keep')")

    def check() -> bool:
        with db.cursor() as cursor:
            found = []
            for table in tables:
                cursor.execute(f"SELECT v FROM {table}")
                found.append(cursor.fetchall())
        return all(rows == (("keep",),) for rows in found)

    return check


def _mongodb(url: str) -> Check:
    import pymongo

    client: Any = pymongo.MongoClient(url, serverSelectionTimeoutMS=5000)
    _CLIENTS.append(client)
    databases = ["theirs", "stratabench_someone_else"]
    for name in databases:
        client[name]["docs"].replace_one({"_id": "k"}, {"_id": "k", "v": "keep"}, upsert=True)
    return lambda: all(client[name]["docs"].find_one({"_id": "k"}) == {"_id": "k", "v": "keep"} for name in databases)


def _sqlite(url: str) -> Check:
    path = unquote(urlsplit(url).path)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    tables = ["theirs", "stratabench_someone_else"]
    with sqlite3.connect(path) as db:
        for table in tables:
            db.execute(f"CREATE TABLE {table} (k TEXT PRIMARY KEY, v TEXT)")
            db.execute(f"INSERT INTO {table} VALUES ('k', 'keep')")

    def check() -> bool:
        with sqlite3.connect(path) as db:
            return all(db.execute(f"SELECT v FROM {t}").fetchall() == [("keep",)] for t in tables)

    return check


def _file(url: str) -> Check:
    directory = Path(unquote(urlsplit(url).path))
    files = [directory / "theirs.txt", directory / "stratabench-someone" / "k", directory / "stratabench-20261122-101010-abcd" / "k"]
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"keep")
    return lambda: all(path.read_bytes() == b"keep" for path in files)


SENTINELS: dict[str, Callable[[str], Check]] = {
    "redis": _redis, "postgresql": _postgresql, "mysql": _mysql, "mongodb": _mongodb, "sqlite": _sqlite, "file": _file,
}
SERVICE_OF = {"redis": "redis", "postgresql": "postgresql", "mysql": "mariadb", "mongodb": "mongodb"}


@pytest.fixture(params=sorted(SENTINELS))
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    name: str = request.param
    if not STORES.info(name).availability.ok:
        unavailable(f"store {name}: {STORES.info(name).availability.reason}")
    if name in SERVICE_OF:
        server_url: Callable[[str], str] = request.getfixturevalue("server_url")
        return server_url(SERVICE_OF[name])
    return {"sqlite": f"sqlite://{tmp_path}/user.db", "file": f"file://{tmp_path}/files"}[name]


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
        for name in ("theirs", "stratabench_someone_else", 'x"; DROP TABLE theirs; --', "sb:*"):
            with pytest.raises(UsageError, match="not a namespace of a stratabench run"):
                store.drop_namespace(name)


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


def test_memcached_says_it_relies_on_expiry(server_url: Callable[[str], str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["clean", "--store", server_url("memcached")]) == 0
    assert "memcached cannot list its keys; the items of a killed run expire" in capsys.readouterr().out
