"""Every registered store against the real thing: the same contract for all.

The stores are the registry's, and each says how to reach a throwaway
instance of itself: embedded stores name a path in a temporary directory
(``Store.scratch_url``), server stores the service that starts a private
server (``Store.service``; the session's servers, ``tests/conftest.py``). So
a store registered by one new file is tested here without editing a list
(``tests/contract/test_new_store.py`` proves it).

Data "of someone else's" must survive the store's cleanup untouched: every
store is checked with a neighbour namespace of its own; stores listed in
:data:`FOREIGN` also get data written with the driver directly, beside the
store's namespace.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from stratabench.errors import StoreError, UsageError, ValueTooLargeError
from stratabench.layers.stores import STORES
from stratabench.layers.stores import open_store
from stratabench.layers.stores.base import BatchStore, ItemLimit, Store, batch_getter, batch_putter
from stratabench.options import RunOptions
from stratabench.redact import password_of
from stratabench.services.session import LocalServices
from tests.availability import unavailable

STORE_NAMES = STORES.names
SERVER_STORES = sorted(info.name for info in STORES if info.cls.service)

BINARY_KEYS = [b"", b"\x00", b"\x00\xff\xfe binary", "clé-ü".encode(), b"a" * 100, b"with space\r\nand newline"]
LARGE = os.urandom(1000) * 700  # about 700 kB, not compressible by accident


def test_every_store_says_how_to_reach_a_throwaway_instance(tmp_path: Path) -> None:
    for info in STORES:
        url = info.cls.scratch_url(tmp_path)
        assert (url is None) != (info.cls.service is None), f"{info.name}: a scratch URL or a service, one of them"
        assert url is None or url.split("://")[0] in info.cls.schemes, f"{info.name}: {url} is not its own scheme"


@pytest.fixture(params=STORE_NAMES)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    name: str = request.param
    info = STORES.info(name)
    if not info.availability.ok:
        unavailable(f"store {name}: {info.availability.reason}")
    if info.cls.service:
        server_url: Callable[[str], str] = request.getfixturevalue("server_url")
        return server_url(info.cls.service)
    url = info.cls.scratch_url(tmp_path)
    assert url is not None
    return url


@pytest.fixture
def namespace(request: pytest.FixtureRequest) -> str:
    # Unique per test, so a failed cleanup cannot leak into another test.
    return f"t{abs(hash(request.node.nodeid)) % 10**10}-{os.getpid()}"


@pytest.fixture
def store(store_url: str, namespace: str) -> Iterator[Store]:
    opened = open_store(store_url, namespace=namespace)
    try:
        yield opened
    finally:
        if not opened._closed:
            opened.cleanup()
            opened.close()


def test_round_trip(store: Store) -> None:
    for index, key in enumerate(BINARY_KEYS):
        store.put(key, f"value {index}".encode())
    store.put(b"empty", b"")
    store.put(b"large", LARGE)
    for index, key in enumerate(BINARY_KEYS):
        assert store.get(key) == f"value {index}".encode(), key
    assert store.get(b"empty") == b""
    assert store.get(b"large") == LARGE
    store.put(b"empty", b"replaced")
    assert store.get(b"empty") == b"replaced"
    assert sorted(store.keys()) == sorted([*BINARY_KEYS, b"empty", b"large"])


def test_missing_and_delete(store: Store) -> None:
    assert store.get(b"never written") is None
    store.delete(b"never written")
    store.put(b"k", b"v")
    store.delete(b"k")
    assert store.get(b"k") is None
    assert list(store.keys()) == []


def test_batch_in_order_with_missing(store: Store) -> None:
    # Through the one batch fallback: the store's own batch where it has one, key by key where not.
    get_many, put_many = batch_getter(store), batch_putter(store)
    if isinstance(store, BatchStore):
        assert (get_many, put_many) == (store.get_many, store.put_many)
    put_many([(b"a", b"1"), (b"\x00b", b"2"), (b"c", LARGE)])
    assert get_many([b"c", b"missing", b"a", b"\x00b", b"a"]) == [LARGE, None, b"1", b"2", b"1"]
    assert get_many([]) == []
    put_many([])


def test_a_batch_overwrites_many_stored_keys_and_the_last_of_a_repeated_key_wins(store: Store) -> None:
    # Every round of a run writes its records again over the last round's: more overwrites in one batch
    # than a server's pool has connections made FerretDB 1.24's bulk update hang (20 did, 19 did not).
    put_many, get_many = batch_putter(store), batch_getter(store)
    keys = [b"k%03d" % i for i in range(64)]
    put_many([(key, b"first") for key in keys])
    put_many([(key, b"second " + key) for key in keys] + [(keys[0], b"last")])
    assert get_many(keys) == [b"last"] + [b"second " + key for key in keys[1:]]
    assert sorted(store.keys()) == keys


def test_namespaces_are_isolated(store_url: str, store: Store) -> None:
    other = open_store(store_url, namespace=f"{store.namespace}-other")
    try:
        store.put(b"shared key", b"mine")
        other.put(b"shared key", b"theirs")
        other.put(b"only theirs", b"x")
        assert store.get(b"shared key") == b"mine"
        assert store.get(b"only theirs") is None
        assert sorted(store.keys()) == [b"shared key"]
        store.cleanup()
        assert other.get(b"shared key") == b"theirs"
        assert sorted(other.keys()) == [b"only theirs", b"shared key"]
    finally:
        other.cleanup()
        other.close()


def test_cleanup_removes_only_ours(store_url: str, namespace: str) -> None:
    first = open_store(store_url, namespace=namespace)
    name = first.name
    plant, survived = FOREIGN.get(name, _neighbour)(store_url)
    try:
        first.put(b"k1", b"v1")
        first.put(b"k2", LARGE)
        first.cleanup()
        first.close()
        again = open_store(store_url, namespace=namespace)
        try:
            assert list(again.keys()) == []
            assert again.get(b"k1") is None
        finally:
            again.cleanup()
            again.close()
        assert survived(), f"{name}: someone else's data did not survive cleanup"
    finally:
        plant_cleanup = getattr(plant, "undo", None)
        if plant_cleanup:
            plant_cleanup()


def test_password_never_shown(store: Store, store_url: str) -> None:
    password = password_of(store_url)
    for text in (str(store), repr(store), store.redacted_url):
        assert store.name in text or "://" in text
        if password:
            assert password not in text
    if password:
        assert "***" in store.redacted_url


@pytest.mark.parametrize("name", SERVER_STORES)
def test_unreachable_server_is_one_line_without_password(name: str, server_url: Callable[[str], str]) -> None:
    info = STORES.info(name)
    if not info.availability.ok:
        unavailable(f"store {name}: {info.availability.reason}")
    from stratabench.services.ports import free_port

    port = free_port()  # nothing listens there
    secret = "s3cret-Pa55word"
    # The private server's own URL (its scheme, database and options), pointed at a dead port.
    assert info.cls.service is not None
    parts = urlsplit(server_url(info.cls.service))
    url = parts._replace(netloc=f"{parts.username or 'bench'}:{secret}@127.0.0.1:{port}").geturl()
    options = RunOptions(settings={f"{name}.server_selection_timeout": "1", f"{name}.connect_timeout": "2"})
    with pytest.raises(StoreError) as caught:
        open_store(url, namespace="unreachable", options=options)
    message = str(caught.value)
    assert "\n" not in message
    assert secret not in message and secret not in repr(caught.value)
    assert f"127.0.0.1:{port}" in message
    assert "stratabench services up" in message


def test_wrong_password_is_one_line_without_it(local_servers: LocalServices) -> None:
    tried = []
    for name in SERVER_STORES:
        service = STORES.info(name).cls.service
        if service not in local_servers:
            continue
        parts = urlsplit(local_servers[service].url)
        if not parts.password:
            continue  # a server without a password: none can be wrong
        tried.append(name)
        secret = "Wr0ng-secret-xyz"
        url = parts._replace(netloc=f"{parts.username}:{secret}@{parts.hostname}:{parts.port}").geturl()
        with pytest.raises(StoreError) as caught:
            open_store(url, namespace="badpassword")
        assert secret not in str(caught.value), name
        assert "\n" not in str(caught.value), name
    if not tried:
        unavailable("no server with a password started")


def test_memcached_item_limit(server_url: Callable[[str], str], namespace: str) -> None:
    with open_store(server_url("memcached"), namespace=namespace) as store:
        assert isinstance(store, ItemLimit)
        limit = store.item_limit_bytes
        assert 1_000_000 < limit < 1024 * 1024
        store.put(b"at limit", b"x" * limit)
        assert store.get(b"at limit") == b"x" * limit
        with pytest.raises(ValueTooLargeError) as caught:
            store.put(b"too large", b"x" * (2 * 1024 * 1024))
        assert "item limit" in str(caught.value)
        store.cleanup()


def test_memcached_lists_its_own_keys_a_metadump_walk_missed(
    server_url: Callable[[str], str], namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # metadump is a live walk: an item moved between LRU segments while it runs can be missed.
    # An empty walk stands for that miss; the keys this store wrote are still listed if present.
    url = server_url("memcached")
    with open_store(url, namespace=namespace) as store, open_store(url, namespace=namespace) as other:
        store.put_many([(b"kept", b"1"), (b"gone", b"2")])
        other.delete(b"gone")  # deleted behind this store's back: not listed
        monkeypatch.setattr(store, "_metadump", lambda: [])
        assert sorted(store.keys()) == [b"kept"]
        store.cleanup()
        assert store.get(b"kept") is None


def test_unknown_and_malformed_urls() -> None:
    from stratabench.errors import UnknownNameError

    with pytest.raises(UnknownNameError, match="redis://"):
        open_store("cassandra://127.0.0.1/", namespace="x")
    with pytest.raises(UsageError):
        open_store("not a url", namespace="x")
    with pytest.raises(UsageError):
        open_store("memory://", namespace="has:colon")


# -- someone else's data, written with the driver directly ---------------------


class Plant:
    """Undo hook for foreign data the test itself must remove afterwards."""

    def __init__(self, undo: Callable[[], None] | None = None) -> None:
        self.undo = undo


Foreign = Callable[[str], tuple[Plant, Callable[[], bool]]]


def _neighbour(url: str) -> tuple[Plant, Callable[[], bool]]:
    # Written through a store of another namespace, which every store has.
    # (LMDB also allows only one open environment per process, which the
    # store already shares, so this is its only way.)
    neighbour = open_store(url, namespace="someone-else")
    neighbour.put(b"theirs", b"keep")

    def undo() -> None:
        neighbour.cleanup()
        neighbour.close()

    return Plant(undo), lambda: neighbour.get(b"theirs") == b"keep"


def _file(url: str) -> tuple[Plant, Callable[[], bool]]:
    directory = Path(unquote(urlsplit(url).path))
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "theirs.txt").write_bytes(b"keep")
    (directory / "stratabench-someone").mkdir(exist_ok=True)
    (directory / "stratabench-someone" / "k00").write_bytes(b"keep")
    return Plant(), lambda: (directory / "theirs.txt").read_bytes() == b"keep" and (
        directory / "stratabench-someone" / "k00"
    ).read_bytes() == b"keep"


def _sqlite(url: str) -> tuple[Plant, Callable[[], bool]]:
    path = unquote(urlsplit(url).path)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE theirs (k TEXT PRIMARY KEY, v TEXT)")
        db.execute("INSERT INTO theirs VALUES ('k', 'keep')")

    def survived() -> bool:
        with sqlite3.connect(path) as db:
            return db.execute("SELECT v FROM theirs WHERE k = 'k'").fetchone() == ("keep",)

    return Plant(), survived


def _redis(url: str) -> tuple[Plant, Callable[[], bool]]:
    import redis

    client = redis.Redis.from_url(url)
    client.set(b"theirs:key", b"keep")
    client.set(b"sb:someone-else:key", b"keep")

    def undo() -> None:
        client.delete(b"theirs:key", b"sb:someone-else:key")
        client.close()

    return Plant(undo), lambda: client.get(b"theirs:key") == b"keep" and client.get(b"sb:someone-else:key") == b"keep"


def _memcached(url: str) -> tuple[Plant, Callable[[], bool]]:
    from stratabench.layers.stores.memcached import memcached_client

    client = memcached_client(url)  # the private server takes a password
    client.set(b"theirs_key", b"keep")

    def undo() -> None:
        client.delete(b"theirs_key")
        client.close()

    return Plant(undo), lambda: client.get(b"theirs_key") == b"keep"


def _postgresql(url: str) -> tuple[Plant, Callable[[], bool]]:
    import psycopg

    db = psycopg.connect(url, autocommit=True)
    db.execute("CREATE TABLE IF NOT EXISTS theirs (k text PRIMARY KEY, v text)")
    db.execute("INSERT INTO theirs VALUES ('k', 'keep') ON CONFLICT DO NOTHING")
    db.execute("CREATE TABLE IF NOT EXISTS stratabench_someone_else (k bytea PRIMARY KEY, v bytea)")

    def undo() -> None:
        db.execute("DROP TABLE theirs")
        db.execute("DROP TABLE stratabench_someone_else")
        db.close()

    def survived() -> bool:
        row = db.execute("SELECT v FROM theirs WHERE k = 'k'").fetchone()
        other = db.execute("SELECT to_regclass('stratabench_someone_else')").fetchone()
        return row == ("keep",) and other is not None and other[0] is not None

    return Plant(undo), survived


def _mysql(url: str) -> tuple[Plant, Callable[[], bool]]:
    import pymysql

    parts = urlsplit(url)
    db: Any = pymysql.connect(
        host=parts.hostname, port=parts.port, user=unquote(parts.username or ""),
        password=unquote(parts.password or ""), database=parts.path.strip("/"), autocommit=True,
    )  # fmt: skip
    with db.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS theirs (k VARCHAR(10) PRIMARY KEY, v TEXT)")
        cursor.execute("INSERT IGNORE INTO theirs VALUES ('k', 'keep')")

    def undo() -> None:
        with db.cursor() as cursor:
            cursor.execute("DROP TABLE theirs")
        db.close()

    def survived() -> bool:
        with db.cursor() as cursor:
            cursor.execute("SELECT v FROM theirs WHERE k = 'k'")
            return bool(cursor.fetchone() == ("keep",))

    return Plant(undo), survived


def _mongodb(url: str) -> tuple[Plant, Callable[[], bool]]:
    import pymongo

    client: Any = pymongo.MongoClient(url, serverSelectionTimeoutMS=5000)
    client["theirs"]["docs"].insert_one({"_id": "k", "v": "keep"})

    def undo() -> None:
        client.drop_database("theirs")
        client.close()

    def survived() -> bool:
        return bool(client["theirs"]["docs"].find_one({"_id": "k"}) == {"_id": "k", "v": "keep"})

    return Plant(undo), survived


#: Data written with a store's driver itself, for the stores whose driver can
#: reach beyond a namespace; any other store is checked with :func:`_neighbour`.
FOREIGN: dict[str, Foreign] = {
    "file": _file,
    "sqlite": _sqlite,
    "redis": _redis,
    "memcached": _memcached,
    "postgresql": _postgresql,
    "mysql": _mysql,
    "mongodb": _mongodb,
}
