"""LMDB: a memory-mapped B+tree, one named sub-database per namespace.

Needs the ``lmdb`` package (``stratabench[stores]``). ``lmdb:///path/dir``
opens (or creates) the environment in that directory and keeps this
namespace in the sub-database ``stratabench_{namespace}``; other
sub-databases and the main database's own keys are never touched, and
:meth:`cleanup` drops only that sub-database.

LMDB refuses empty keys and keys over 511 bytes, so every key is stored
behind one marker byte: the empty key works, and keys up to 510 bytes do.
An environment may be opened only once per process, so stores of one
process on the same path share it.

Settings (``lmdb.*``: map size, sub-databases, fsync on commit):
``stratabench list settings`` shows them with their defaults.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from stratabench.errors import UsageError
from stratabench.layers.stores import STORES
from stratabench.layers.stores.base import Store, namespace_identifier
from stratabench.settings import Setting

__all__ = ["LmdbStore"]

_MARK = b"\x01"
_MAX_KEY = 511 - len(_MARK)

# path -> [environment, number of stores using it]
_ENVIRONMENTS: dict[str, list[Any]] = {}
_LOCK = threading.Lock()


@STORES.register("lmdb", requires=("lmdb",), extra="stores")
class LmdbStore(Store):
    """An LMDB environment; this namespace is a named sub-database."""

    schemes = ("lmdb",)
    settings = (
        Setting("lmdb.map_size", str(1 << 30), "the environment's largest size in bytes (the file is sparse)",
                "whole", minimum=1 << 20, maximum=1 << 40),
        Setting("lmdb.max_dbs", "128", "named sub-databases the environment can hold", "whole",
                minimum=1, maximum=10_000),
        Setting("lmdb.sync", "yes", "fsync on every commit, LMDB's own default", "flag"),
    )

    @classmethod
    def scratch_url(cls, directory: Path) -> str:
        return f"lmdb://{directory}/lmdb"

    def _open(self) -> None:
        import lmdb

        if not self.path:
            raise UsageError(f"store URL {self.redacted_url!r} names no directory; use lmdb:///path/to/dir")
        self._real = os.path.realpath(self.path)
        map_size = self.config.whole("lmdb.map_size")
        max_dbs = self.config.whole("lmdb.max_dbs")
        sync = self.config.flag("lmdb.sync")
        try:
            with _LOCK:
                entry = _ENVIRONMENTS.get(self._real)
                if entry is None:
                    os.makedirs(self._real, exist_ok=True)
                    env = lmdb.open(self._real, map_size=map_size, max_dbs=max_dbs, sync=sync)
                    entry = _ENVIRONMENTS[self._real] = [env, 0]
                entry[1] += 1
            self._env = entry[0]
            self._db = self._env.open_db(namespace_identifier(self.namespace).encode())
        except (lmdb.Error, OSError) as exc:
            raise self._unreachable(exc) from exc

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        import lmdb

        return (lmdb.Error, OSError)

    @staticmethod
    def _key(key: bytes) -> bytes:
        if len(key) > _MAX_KEY:
            raise UsageError(f"key of {len(key)} bytes is too long for lmdb (at most {_MAX_KEY} bytes)")
        return _MARK + key

    def get(self, key: bytes) -> bytes | None:
        stored = self._key(key)
        with self._guard("get"), self._env.begin(db=self._db, buffers=False) as txn:
            value = txn.get(stored)
        return None if value is None else bytes(value)

    def put(self, key: bytes, value: bytes) -> None:
        stored = self._key(key)
        with self._guard("put"), self._env.begin(db=self._db, write=True) as txn:
            txn.put(stored, value)

    def delete(self, key: bytes) -> None:
        stored = self._key(key)
        with self._guard("delete"), self._env.begin(db=self._db, write=True) as txn:
            txn.delete(stored)

    def keys(self) -> Iterator[bytes]:
        with self._guard("keys"), self._env.begin(db=self._db) as txn:
            keys = [bytes(key)[len(_MARK) :] for key in txn.cursor().iternext(keys=True, values=False)]
        return iter(keys)

    def get_many(self, keys: Sequence[bytes]) -> list[bytes | None]:
        stored = [self._key(key) for key in keys]
        with self._guard("get_many"), self._env.begin(db=self._db) as txn:
            values = [txn.get(key) for key in stored]
        return [None if value is None else bytes(value) for value in values]

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> None:
        pairs = [(self._key(key), value) for key, value in items]
        with self._guard("put_many"), self._env.begin(db=self._db, write=True) as txn:
            for key, value in pairs:
                txn.put(key, value)

    def cleanup(self) -> None:
        # Deleting the sub-database invalidates its handle in every store of
        # this process; while another store shares the environment, only empty it.
        with _LOCK:
            alone = _ENVIRONMENTS.get(self._real, [None, 0])[1] <= 1
        with self._guard("cleanup"), self._env.begin(write=True) as txn:
            txn.drop(self._db, delete=alone)

    def _close(self) -> None:
        with _LOCK:
            entry = _ENVIRONMENTS.get(self._real)
            if entry is None:
                return
            entry[1] -= 1
            if entry[1] == 0:
                del _ENVIRONMENTS[self._real]
                entry[0].close()
