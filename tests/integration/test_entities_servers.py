"""The entities suite and the lazy entity against real local servers started by stratabench.

Every store round-trips the entities (stored under ndb's global-cache keys,
read back in one multi-get and decoded by the lazy entity and by ndb through
the global-cache adapter); on Redis and memcached, ndb's own bundled caches
read the same records and agree. Integrity and metrics only, never speeds.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stratabench.engine.cell import run_cell_in_process
from stratabench.layers.mappers.lazy_entity import LazyEntityMapper
from stratabench.layers.mappers.ndb_model import NdbModelMapper
from stratabench.layers.mappers.ndb_toolkit import generate, ndb_context
from stratabench.layers.stores import STORES
from stratabench.layers.stores import open_store
from stratabench.layers.stores.base import Store
from stratabench.options import EngineOptions, RunOptions
from stratabench.suites.entities.suite import EntitiesSuite
from tests.availability import unavailable

pytestmark = pytest.mark.server

FAST = EngineOptions(samples=2, warmups=0, min_sample_ns=1_000_000, memory_samples=1, isolate=False)
SERVICE_OF = {"redis": "redis", "memcached": "memcached", "postgresql": "postgresql", "mysql": "mariadb",
              "mongodb": "mongodb"}


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATABENCH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "datasets"))


@pytest.fixture(params=STORES.names)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    name: str = request.param
    info = STORES.info(name)
    if not info.availability.ok:
        unavailable(f"store {name}: {info.availability.reason}")
    if name in SERVICE_OF:
        server_url: Callable[[str], str] = request.getfixturevalue("server_url")
        url = server_url(SERVICE_OF[name])
    else:
        url = {"memory": "memory://", "file": f"file://{tmp_path}/files", "sqlite": f"sqlite://{tmp_path}/b.db",
               "lmdb": f"lmdb://{tmp_path}/lmdb"}[name]
    opened = open_store(url, namespace=f"entities-it-{os.getpid()}")
    try:
        yield opened
    finally:
        opened.cleanup()
        opened.close()


def test_entities_round_trip_through_every_store(store: Store) -> None:
    from google.cloud import ndb

    from stratabench.layers.mappers.ndb_global_cache import store_global_cache

    dataset = generate("mixed", 100, "expando")
    for ident in dataset.ids:
        store.put(dataset.cache_key(ident), dataset.blob(ident))
    blobs = [store.get(key) for key in dataset.get_keys]
    lazy = LazyEntityMapper(dataset)
    assert lazy.canonical_hash(lazy.decode_many(blobs)) == dataset.get_hash
    mapper = NdbModelMapper(dataset)
    with ndb_context(global_cache=store_global_cache(store)).use():
        found = ndb.get_multi([ndb.Key(dataset.kind, i) for i in dataset.get_ids], use_cache=False,
                              use_datastore=False)
    assert mapper.canonical_hash(found) == dataset.get_hash


@pytest.mark.parametrize("service", ["redis", "memcached"])
def test_get20_cells_on_a_server_store_including_ndbs_own_cache(service: str, server_url: Callable[[str], str]) -> None:
    opts = RunOptions(suites=("entities",), stores=(server_url(service),), engine=FAST, run_id=f"it-{os.getpid()}",
                      settings={"entities.stores": service, "entities.schemas": "text", "entities.widths": "10",
                                "entities.flavours": "model,dynamic", "entities.cells": "get20"})
    cells = EntitiesSuite(opts).cells()
    assert {c.params["path"] for c in cells} == {"bytes", "message", "datastore", "ndb.get", "ndb.get.bundled", "lazy"}
    for cell in cells:
        result = run_cell_in_process(cell, opts)
        assert result.ok, f"{cell.name}: {result.error}"
        assert result.integrity is not None and result.integrity.ok, cell.name
        assert {"wall_ns", "cpu_ns", "server_cpu_ns"} <= set(result.metrics), cell.name
