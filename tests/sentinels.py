"""The user's own data beside the tool's: sentinels that every clean-up must leave intact.

Written with the drivers directly, several of them named to look almost
like the tool's (``sb:someone-else:``, ``stratabench_someone_else``, a run
id without a cell). Each ``SENTINELS[store](url)`` plants them and returns
a check that they are all still there, unchanged.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

__all__ = ["SENTINELS", "Check", "close_sentinel_clients"]

Check = Callable[[], bool]
# Driver clients the sentinels opened, closed after each test.
_CLIENTS: list[Any] = []


@pytest.fixture
def close_sentinel_clients() -> Iterator[None]:
    """Close the driver clients the sentinels opened (use it in every test that plants them)."""
    yield
    while _CLIENTS:
        _CLIENTS.pop().close()


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


def _lmdb(url: str) -> Check:
    import lmdb

    directory = Path(unquote(urlsplit(url).path))
    directory.mkdir(parents=True, exist_ok=True)
    names = [b"theirs", b"stratabench_someone_else", b"stratabench_20261122_101010_abcd"]
    env = lmdb.open(str(directory), max_dbs=16)
    with env.begin(write=True) as txn:
        for name in names:
            txn.put(b"k", b"keep", db=env.open_db(name, txn=txn))
    env.close()

    def check() -> bool:
        env = lmdb.open(str(directory), max_dbs=16, readonly=True)
        try:
            with env.begin() as txn:
                return all(txn.get(b"k", db=env.open_db(name, txn=txn, create=False)) == b"keep" for name in names)
        finally:
            env.close()

    return check


SENTINELS: dict[str, Callable[[str], Check]] = {
    "redis": _redis, "postgresql": _postgresql, "mysql": _mysql, "mongodb": _mongodb, "sqlite": _sqlite, "file": _file,
    "lmdb": _lmdb,
}
