"""ndb's global cache over any project store: ndb's whole read path, no Datastore.

ndb keeps serialized v1 entities in its *global cache* under
``b"NDB30" + serialized Key``, exactly the records the entities suite
stores. :func:`store_global_cache` wraps a project store (memory, SQLite,
Redis, PostgreSQL, ...) as an ``ndb.GlobalCache``, so
``ndb.get_multi(keys, use_cache=False, use_datastore=False)`` inside a
context that has it runs ndb's complete read machinery (tasklets, batching,
event loop, decode) against that store, with no Google service.

Needs ``google-cloud-ndb`` (imported when an adapter is built, never at
module import, so listing mappers stays cheap).

What it cannot do: expiry times are ignored (the suite's records never
expire), and ``watch``/``compare_and_swap`` (ndb's write-back after a
Datastore read, which ``use_datastore=False`` never does) are kept in the
adapter's memory, not made atomic on the store. ``clear`` deletes only what
the adapter itself wrote, never the whole store.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from stratabench.layers.stores.base import batch_getter, batch_putter

__all__ = ["KeyValueStore", "store_global_cache"]


class KeyValueStore(Protocol):
    """What the adapter needs of a store: get, put, delete (its batches used when it is a ``BatchStore``)."""

    def get(self, key: bytes) -> bytes | None: ...

    def put(self, key: bytes, value: bytes) -> None: ...

    def delete(self, key: bytes) -> None: ...


@functools.lru_cache(maxsize=1)
def _adapter_class() -> type:
    from google.cloud.ndb import global_cache

    class StoreGlobalCache(global_cache.GlobalCache):  # type: ignore[misc]
        """An ``ndb.GlobalCache`` reading and writing a stratabench store."""

        # A store failure must fail the cell, not turn into a silent miss.
        strict_read = True
        strict_write = True

        def __init__(self, store: KeyValueStore) -> None:
            self.store = store
            self._get_many, self._put_many = batch_getter(store), batch_putter(store)
            self._watched: dict[bytes, bytes | None] = {}
            self._written: set[bytes] = set()

        def get(self, keys: Sequence[bytes]) -> list[bytes | None]:
            return list(self._get_many(list(keys)))

        def _put(self, items: Iterable[tuple[bytes, bytes | None]]) -> None:
            pairs = []
            for key, value in items:
                if value is None:
                    self.store.delete(key)
                else:
                    pairs.append((key, value))
            self._put_many(pairs)
            self._written.update(key for key, _ in pairs)

        def set(self, items: dict[bytes, bytes | None], expires: float | None = None) -> None:
            self._put(items.items())

        def set_if_not_exists(self, items: dict[bytes, bytes], expires: float | None = None) -> dict[bytes, bool]:
            keys = list(items)
            current = self.get(keys)
            results = {key: value is None for key, value in zip(keys, current)}
            self._put((key, items[key]) for key in keys if results[key])
            return results

        def delete(self, keys: Sequence[bytes]) -> None:
            for key in keys:
                self.store.delete(key)
                self._written.discard(key)

        def watch(self, items: dict[bytes, bytes]) -> None:
            self._watched.update(items)

        def unwatch(self, keys: Sequence[bytes]) -> None:
            for key in keys:
                self._watched.pop(key, None)

        def compare_and_swap(self, items: dict[bytes, bytes], expires: float | None = None) -> dict[bytes, bool]:
            keys = list(items)
            current = self.get(keys)
            results = {}
            for key, value in zip(keys, current):
                results[key] = key in self._watched and self._watched[key] == value
            self._put((key, items[key]) for key in keys if results[key])
            for key in keys:
                self._watched.pop(key, None)
            return results

        def clear(self) -> None:
            # ndb calls this after a connection error; a project store may
            # hold other data, so only this adapter's own writes go.
            self.delete(list(self._written))

    return StoreGlobalCache


def store_global_cache(store: KeyValueStore) -> Any:
    """An ``ndb.GlobalCache`` over ``store`` (see the module docstring).

    Parameters
    ----------
    store
        A project store (``stratabench.layers.stores``), or any object with
        ``get``, ``put`` and ``delete`` on bytes; ``get_many`` and
        ``put_many`` are used when present, so a get of 20 is one round trip.
    """
    return _adapter_class()(store)
