"""Every registered treestore backend against the real thing, through one contract.

Embedded backends run in temporary directories; server backends against the
session's private Redis and MongoDB-wire servers (``tests/conftest.py``; a
missing server fails under ``CI=true``). Each backend: stores and loads
trees exactly (hash), loads a path's nodes with their ancestors, keeps
user-ordered positions through inserts that force shifts, keeps push data
per owner, runs the 22 tests with every integrity check passing, and leaves
nothing behind.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from stratabench.errors import UnavailableError
from stratabench.systems.treestore.backends import TREE_BACKENDS
from stratabench.systems.treestore.backends.base import OPERATIONAL, RUNNING, TreeBackend
from stratabench.systems.treestore.core import Core, installed, stored_tree
from stratabench.suites.treestore.dataset import Dataset, document_hash
from stratabench.suites.treestore.harness import run_backend
from stratabench.systems.treestore.paths import parse
from stratabench.systems.treestore.records import load_scopes
from stratabench.systems.treestore.schema import PERF
from stratabench.systems.treestore.tree import to_json, tree_hash

pytestmark = pytest.mark.server

UNAVAILABLE_HERE = {"redis+search"}  # Debian's redis-server has no RediSearch 2.x
RUNNABLE = [name for name in TREE_BACKENDS.names if name not in UNAVAILABLE_HERE]


def test_every_backend_is_covered() -> None:
    assert set(TREE_BACKENDS.names) == {"json-file", "sqlite", "sqlite@disk", "redis", "redis+search", "mongodb"}


def open_backend(name: str, request: pytest.FixtureRequest, tmp_path: Path, namespace: str) -> TreeBackend:
    backend_class = TREE_BACKENDS.get(name)
    service = backend_class.service
    if service is None:
        return backend_class(namespace, directory=tmp_path)
    server_url: Callable[[str], str] = request.getfixturevalue("server_url")
    return backend_class(namespace, url=server_url(service))


@pytest.fixture
def namespace(request: pytest.FixtureRequest) -> str:
    return f"c{abs(hash(request.node.nodeid)) % 10**8}_{os.getpid()}"


@pytest.fixture(params=RUNNABLE)
def core(request: pytest.FixtureRequest, tmp_path: Path, namespace: str) -> Iterator[Core]:
    with installed(open_backend(request.param, request, tmp_path, namespace)) as core:
        yield core


def test_redis_search_is_unavailable_with_its_reason(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    with pytest.raises(UnavailableError, match="RediSearch"):
        open_backend("redis+search", request, tmp_path, "unavailable")


def test_a_stored_tree_loads_back_exactly(core: Core) -> None:
    data = Dataset(40)
    both = {"perf:cont": {**data.lst_document()["perf:cont"], **data.usr_document()["perf:cont"]}}
    session = core.connect().session()
    session.merge(both)
    session.commit()
    assert tree_hash(stored_tree(core)) == document_hash(both)


def test_a_path_loads_its_node_with_its_ancestors(core: Core) -> None:
    data = Dataset(40)
    session = core.connect().session()
    session.merge(data.lst_document())
    session.commit()
    conn = core.connect()
    loaded = core.backend.load(conn.client, PERF, RUNNING, None, load_scopes([parse(PERF, data.p_m)]))
    entry = loaded.children["cont"].children["lst"].entries[(data.m, f"str{data.m}")]
    assert entry.children == {"k1": data.m, "k2": f"str{data.m}", "l": f"l{data.m}"}
    conn.close()


def test_user_ordered_positions_survive_inserts_that_force_shifts(core: Core) -> None:
    session = core.connect().session()
    session.set("/perf:cont/usr-lst[k='0']/l", "first")
    session.set("/perf:cont/usr-lst[k='1']/l", "last")
    session.commit()
    # Each new instance goes right after k=0: the gap of 1,024 halves until neighbours are adjacent.
    for k in range(2, 16):
        session.set(f"/perf:cont/usr-lst[k='{k}']", after=(0,))
        session.commit()
    session.set("/perf:cont/usr-lst[k='99']", after=None)  # first
    session.delete("/perf:cont/usr-lst[k='8']")
    session.commit()
    expected = [99, 0, *range(15, 8, -1), *range(7, 1, -1), 1]
    stored = stored_tree(core)
    assert [key[0] for key in stored.children["cont"].children["usr-lst"].entries] == expected
    # The core's own tree agrees (a cached connection never reloads).
    assert to_json(stored) == to_json(core.connect(cache=True).session().get_data("/perf:cont"))


def test_push_data_is_kept_per_owner_and_removed_with_its_session(core: Core) -> None:
    first, second = core.connect().session(OPERATIONAL), core.connect().session(OPERATIONAL)
    first.set("/perf:cont/lst[k1='1'][k2='a']/l", "from first")
    first.commit()
    second.set("/perf:cont/lst[k1='2'][k2='b']/l", "from second")
    second.commit()
    assert to_json(stored_tree(core, OPERATIONAL, first.owner)) == \
        b'{"perf:cont":{"lst":[{"k1":1,"k2":"a","l":"from first"}]}}'
    view = second.get_data("/perf:cont")
    assert [key for key in view.children["cont"].children["lst"].entries] == [(1, "a"), (2, "b")]
    first.stop()
    assert stored_tree(core, OPERATIONAL, first.owner) is None
    assert stored_tree(core, OPERATIONAL, second.owner) is not None


def test_access_follows_the_installed_permissions(core: Core) -> None:
    conn = core.connect()
    assert core.backend.access(conn.client, PERF, RUNNING) == (True, True)
    assert core.backend.last_modified(conn.client, PERF, RUNNING) is None or \
        core.backend.last_modified(conn.client, PERF, RUNNING) > 0
    conn.close()


@pytest.mark.parametrize("name", RUNNABLE)
def test_the_22_tests_pass_their_integrity_checks_and_leave_nothing(
        name: str, request: pytest.FixtureRequest, tmp_path: Path, namespace: str) -> None:
    backend = open_backend(name, request, tmp_path, namespace)
    outcomes = list(run_backend(backend, 12, tries=2, tries_for={11: 1}))  # 11 is 20 commits: one try is plenty
    assert [o.test.number for o in outcomes] == list(range(1, 23))
    for outcome in outcomes:
        assert outcome.ok, f"{outcome.test.name}: {outcome.error}"
        assert len(outcome.samples_ns) == (1 if outcome.test.number == 11 else 2)
        assert all(sample > 0 for sample in outcome.samples_ns)
        assert outcome.checks >= 1 and outcome.actual_hash == outcome.expected_hash
    assert leftovers(name, backend, tmp_path) == []


def leftovers(name: str, backend: TreeBackend, tmp_path: Path) -> list[Any]:
    """What the backend's namespace still holds after cleanup."""
    if name in ("json-file", "sqlite", "sqlite@disk"):
        places = [tmp_path]
        return [path for place in places for path in place.iterdir() if backend.namespace in path.name]
    if name == "redis":
        import redis

        client = redis.Redis.from_url(backend.url or "")
        try:
            return list(client.scan_iter(match=f"sbts:{backend.namespace}:*"))
        finally:
            client.close()
    import pymongo

    mongo: Any = pymongo.MongoClient(backend.url)
    try:
        return [db for db in mongo.list_database_names() if backend.namespace in db]
    finally:
        mongo.close()
