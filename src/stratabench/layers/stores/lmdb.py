"""LMDB: a memory-mapped B+tree, one named sub-database per namespace.

Needs the ``lmdb`` package (``stratabench[stores]``). ``lmdb:///path/dir``
opens (or creates) the environment in that directory and keeps this
namespace in the sub-database ``stratabench_{namespace}``; other
sub-databases and the main database's own keys are never touched, and
:meth:`cleanup` drops only that sub-database. ``stratabench clean`` finds
the sub-databases of runs by the shape of their names
(:class:`~stratabench.layers.stores.base.Sweepable`).

The environment's directory is created only when its parent exists (a typo
must not leave a tree of directories behind), and then marked as the
tool's: when the last store of a process closes it with no sub-database
left in it, the directory (data, lock file, mark) is removed again, so
that neither a finished run nor ``clean`` after a killed one leaves an
empty environment behind. A directory the user made is never removed.

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
from stratabench.layers.stores.base import Store
from stratabench.layers.stores.namespaces import RUN_IDENTIFIER_PATTERN, namespace_identifier, swept_name
from stratabench.settings import Setting

__all__ = ["LmdbStore"]

_MARK = b"\x01"
# In an environment directory this tool created: it may remove the directory once empty.
_CREATED = ".stratabench-created"
_FILES = ("data.mdb", "lock.mdb", _CREATED)
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
        if self.sweeping and not os.path.isfile(os.path.join(self._real, "data.mdb")):
            raise UsageError(f"store URL {self.redacted_url!r}: no LMDB environment there to clean")
        parent = os.path.dirname(self._real)
        if not os.path.isdir(self._real) and not os.path.isdir(parent):
            raise UsageError(f"directory {parent} does not exist; create it, or name a directory in one that does")
        map_size = self.config.whole("lmdb.map_size")
        max_dbs = self.config.whole("lmdb.max_dbs")
        sync = self.config.flag("lmdb.sync")
        try:
            with _LOCK:
                entry = _ENVIRONMENTS.get(self._real)
                if entry is None:
                    if not os.path.isdir(self._real):
                        os.mkdir(self._real, 0o700)
                        open(os.path.join(self._real, _CREATED), "x").close()  # noqa: SIM115 -- an empty mark
                    env = lmdb.open(self._real, map_size=map_size, max_dbs=max_dbs, sync=sync, create=False)
                    entry = _ENVIRONMENTS[self._real] = [env, 0]
                entry[1] += 1
            self._env = entry[0]
            # A sweeping store creates nothing: no sub-database of its own.
            self._db = None if self.sweeping else self._env.open_db(namespace_identifier(self.namespace).encode())
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

    def list_namespaces(self) -> list[str]:
        # Named sub-databases are the keys of the main database.
        with self._guard("list namespaces"), self._env.begin() as txn:
            names = [bytes(key).decode("latin-1") for key in txn.cursor().iternext(keys=True, values=False)]
        return sorted(name for name in names if RUN_IDENTIFIER_PATTERN.match(name))

    def drop_namespace(self, name: str) -> None:
        name = swept_name(name, RUN_IDENTIFIER_PATTERN)
        with self._guard("drop namespace"):
            db = self._env.open_db(name.encode(), create=False)
            with self._env.begin(write=True) as txn:
                txn.drop(db, delete=True)

    def _close(self) -> None:
        with _LOCK:
            entry = _ENVIRONMENTS.get(self._real)
            if entry is None:
                return
            entry[1] -= 1
            if entry[1] == 0:
                del _ENVIRONMENTS[self._real]
                env = entry[0]
                empty = os.path.isfile(os.path.join(self._real, _CREATED)) and env.stat()["entries"] == 0
                env.close()
                if empty:
                    _remove_environment(self._real)


def _remove_environment(directory: str) -> None:
    """Remove an empty environment this tool created: its files, its mark, the directory if nothing else is there."""
    for name in _FILES:
        try:
            os.unlink(os.path.join(directory, name))
        except FileNotFoundError:
            pass
    try:
        os.rmdir(directory)
    except OSError:
        pass  # the user put something of their own there: theirs to keep
