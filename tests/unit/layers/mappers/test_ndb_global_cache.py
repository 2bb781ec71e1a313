"""ndb's global cache over project stores agrees with ndb's own in-process cache."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stratabench.datasets import entities as E
from stratabench.layers.mappers.ndb_global_cache import store_global_cache
from stratabench.layers.mappers.ndb_model import NdbModelMapper
from stratabench.layers.mappers.ndb_toolkit import generate, ndb_context
from stratabench.layers.stores import open_store
from stratabench.layers.stores.base import Store


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    url = {"memory": "memory://", "sqlite": f"sqlite://{tmp_path}/bench.db"}[request.param]
    opened = open_store(url, namespace=f"entities-cache-{request.param}")
    try:
        yield opened
    finally:
        opened.cleanup()
        opened.close()


def get_multi(dataset: E.EntitiesDataset, cache: Any, ids: list[int]) -> list[Any]:
    from google.cloud import ndb

    with ndb_context(global_cache=cache).use():
        keys = [ndb.Key(dataset.kind, ident) for ident in ids]
        return list(ndb.get_multi(keys, use_cache=False, use_datastore=False))


@pytest.mark.parametrize("flavour", E.FLAVOURS)
def test_adapter_agrees_with_ndbs_in_process_cache(store: Store, flavour: str) -> None:
    from google.cloud.ndb import global_cache

    dataset = generate("mixed", 100, flavour)
    mapper = NdbModelMapper(dataset)  # defines the kind's ndb class, which ndb looks up by kind
    items = {dataset.cache_key(ident): dataset.blob(ident) for ident in dataset.ids}
    adapter = store_global_cache(store)
    adapter.set(items)
    reference = global_cache._InProcessGlobalCache()
    reference.clear()
    reference.set(items)
    ids = [*dataset.get_ids, 1000]  # and one miss
    ours, theirs = get_multi(dataset, adapter, ids), get_multi(dataset, reference, ids)
    assert ours[-1] is None and theirs[-1] is None
    assert [mapper.values(x) for x in ours[:-1]] == [mapper.values(x) for x in theirs[:-1]]
    assert mapper.canonical_hash(ours) == dataset.get_hash
    reference.clear()


def test_adapter_writes_and_clears_only_its_own_keys(store: Store) -> None:
    store.put(b"someone else's", b"keep")
    adapter = store_global_cache(store)
    assert adapter.set_if_not_exists({b"k1": b"v1"}) == {b"k1": True}
    assert adapter.set_if_not_exists({b"k1": b"v2"}) == {b"k1": False}
    adapter.watch({b"k1": b"v1"})
    assert adapter.compare_and_swap({b"k1": b"v3"}) == {b"k1": True}
    assert adapter.compare_and_swap({b"k1": b"v4"}) == {b"k1": False}  # no longer watched
    assert adapter.get([b"k1", b"nothing"]) == [b"v3", None]
    adapter.clear()
    assert store.get(b"k1") is None and store.get(b"someone else's") == b"keep"


def test_adapter_works_on_a_store_without_batches(store: Store) -> None:
    class Plain:
        def __init__(self, inner: Store) -> None:
            self.inner = inner

        def get(self, key: bytes) -> bytes | None:
            return self.inner.get(key)

        def put(self, key: bytes, value: bytes) -> None:
            self.inner.put(key, value)

        def delete(self, key: bytes) -> None:
            self.inner.delete(key)

    dataset = generate("text", 10, "model")
    mapper = NdbModelMapper(dataset)
    adapter = store_global_cache(Plain(store))
    adapter.set({dataset.cache_key(i): dataset.blob(i) for i in dataset.get_ids})
    assert mapper.canonical_hash(get_multi(dataset, adapter, list(dataset.get_ids))) == dataset.get_hash
