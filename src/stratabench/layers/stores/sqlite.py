"""SQLite: a key/value table in a database file, with the standard library.

Needs nothing beyond Python's ``sqlite3``. ``sqlite:///path/bench.db``
creates the file if needed and keeps this namespace in the table
``stratabench_{namespace}``; other tables in the file are never touched and
:meth:`cleanup` drops only that table. ``stratabench clean`` finds the
tables of runs by the shape of their names
(:class:`~stratabench.layers.stores.base.Sweepable`). ``sqlite:///:memory:`` gives a
private in-memory database.

A database file this store created is marked as the tool's (``PRAGMA
application_id``); when a store closes it with no table left in it (the
run's cleanup, or ``clean`` after a killed run), the file and its journal
go too. A file that existed before is never removed.

In WAL mode (the default) SQLite checkpoints inside the commit that takes
the log past 1,000 pages: that write copies the log into the database file
and waits for it. A caller that times writes takes that upkeep out of them
(:meth:`SqliteStore.defer_upkeep`, :func:`checkpoint_apart`): commits stop
checkpointing, and the call it gets checkpoints the whole log and restarts
it, between samples.

Settings (``sqlite.*``: journal mode, synchronous, busy timeout):
``stratabench list settings`` shows them with their defaults.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from urllib.parse import SplitResult

from stratabench.errors import UsageError
from stratabench.layers.stores import STORES
from stratabench.layers.stores.base import Store, url_path
from stratabench.layers.stores.namespaces import RUN_IDENTIFIER_PATTERN, namespace_identifier, swept_name
from stratabench.settings import Setting, SettingReader

__all__ = ["SqliteStore", "checkpoint_apart"]

# SQLite's default SQLITE_MAX_VARIABLE_NUMBER is 32766 since 3.32 but 999
# before; stay under the old limit so any build works.
_CHUNK = 500
# PRAGMA application_id of a database file this store created ("sbch").
_APPLICATION_ID = 0x73626368


def connect(path: str, config: SettingReader) -> sqlite3.Connection:
    """Open an SQLite file (or ``:memory:``) with the ``sqlite.*`` settings, in autocommit mode.

    Shared with the cache suite's row tables, so both open the database alike.
    """
    db = sqlite3.connect(path, timeout=config.number("sqlite.busy_timeout"), isolation_level=None)
    db.execute(f"PRAGMA journal_mode={config.text('sqlite.journal_mode')}")
    db.execute(f"PRAGMA synchronous={config.text('sqlite.synchronous')}")
    return db


def checkpoint_apart(db: sqlite3.Connection,
                     guard: Callable[[str], AbstractContextManager[None]]) -> Callable[[], None]:
    """Stop ``db``'s commits from checkpointing its WAL; return the call that checkpoints it, under ``guard``.

    ``PRAGMA wal_autocheckpoint = 0`` for this connection (the only one
    that writes), so no commit copies the log back; the call returned runs
    ``PRAGMA wal_checkpoint(RESTART)``: the whole log into the database
    file, and the next write starts the log again from its first frame,
    over the file's old frames, as a long-lived database's log is reused
    after each checkpoint. After ``TRUNCATE`` (the log cut to nothing, so
    the writes grow the file again) the cache study's writes read 4-12%
    slower than after ``RESTART`` or with no checkpoint at all (medians of
    nine visits each, under the lock). A checkpoint that could not finish
    (another connection reading) fails, as the store's one-line error,
    rather than leave the log to grow. Outside WAL mode both are no-ops.
    Shared with the cache suite's row tables.
    """
    with guard("defer checkpoints"):
        db.execute("PRAGMA wal_autocheckpoint = 0")

    def checkpoint() -> None:
        with guard("checkpoint"):
            (busy, _, _) = db.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
            if busy:
                raise sqlite3.OperationalError("the WAL checkpoint could not finish while another connection "
                                               "reads the database (close it)")

    return checkpoint


@STORES.register("sqlite")
class SqliteStore(Store):
    """A table of key/value rows in an SQLite file."""

    schemes = ("sqlite",)
    settings = (
        Setting("sqlite.journal_mode", "wal", "PRAGMA journal_mode",
                choices=("delete", "memory", "off", "persist", "truncate", "wal")),
        Setting("sqlite.synchronous", "normal", "PRAGMA synchronous", choices=("extra", "full", "normal", "off")),
        Setting("sqlite.busy_timeout", "5", "seconds to wait for another connection's lock (0: fail at once)",
                "number", minimum=0, maximum=3600),
    )

    @classmethod
    def check_url(cls, parts: SplitResult) -> None:
        path = url_path(parts)
        if path in ("", "/:memory:", ":memory:"):
            return
        folder = Path(path).parent
        if not folder.is_dir():
            # Never create directories a URL names: a typo would leave them behind.
            raise UsageError(f"directory {folder} does not exist; create it, or name a file in one that does")

    @classmethod
    def scratch_url(cls, directory: Path) -> str:
        return f"sqlite://{directory}/bench.db"

    def _open(self) -> None:
        path = self.path
        if path in ("/:memory:", ":memory:"):
            path = ":memory:"
        elif not path:
            raise UsageError(f"store URL {self.redacted_url!r} names no file; use sqlite:///path/bench.db")
        self._table = namespace_identifier(self.namespace)
        if self.sweeping and path != ":memory:" and not Path(path).is_file():
            raise UsageError(f"store URL {self.redacted_url!r}: no such database file to clean")
        self._file = None if path == ":memory:" else Path(path)
        created = self._file is not None and not self.sweeping and not self._file.exists()
        try:
            self._db = connect(path, self.config)
            if created:
                self._db.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
            if not self.sweeping:
                self._db.execute(
                    f'CREATE TABLE IF NOT EXISTS "{self._table}" (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID'
                )
        except (sqlite3.Error, OSError) as exc:
            raise self._unreachable(exc) from exc

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        return (sqlite3.Error, OSError)

    def get(self, key: bytes) -> bytes | None:
        with self._guard("get"):
            row = self._db.execute(f'SELECT v FROM "{self._table}" WHERE k = ?', (key,)).fetchone()
        return None if row is None else bytes(row[0])

    def put(self, key: bytes, value: bytes) -> None:
        with self._guard("put"):
            self._db.execute(f'INSERT OR REPLACE INTO "{self._table}" (k, v) VALUES (?, ?)', (key, value))

    def delete(self, key: bytes) -> None:
        with self._guard("delete"):
            self._db.execute(f'DELETE FROM "{self._table}" WHERE k = ?', (key,))

    def keys(self) -> Iterator[bytes]:
        with self._guard("keys"):
            rows = self._db.execute(f'SELECT k FROM "{self._table}"').fetchall()
        return (bytes(row[0]) for row in rows)

    def get_many(self, keys: Sequence[bytes]) -> list[bytes | None]:
        found: dict[bytes, bytes] = {}
        with self._guard("get_many"):
            for start in range(0, len(keys), _CHUNK):
                chunk = list(keys[start : start + _CHUNK])
                marks = ",".join("?" * len(chunk))
                sql = f'SELECT k, v FROM "{self._table}" WHERE k IN ({marks})'
                found.update((bytes(k), bytes(v)) for k, v in self._db.execute(sql, chunk))
        return [found.get(key) for key in keys]

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> None:
        with self._guard("put_many"):
            self._db.execute("BEGIN")
            try:
                self._db.executemany(f'INSERT OR REPLACE INTO "{self._table}" (k, v) VALUES (?, ?)', items)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def defer_upkeep(self) -> Callable[[], None]:
        """:class:`~stratabench.layers.stores.base.DeferredUpkeep`: the WAL's checkpoint (:func:`checkpoint_apart`)."""
        return checkpoint_apart(self._db, self._guard)

    def cleanup(self) -> None:
        with self._guard("cleanup"):
            self._db.execute(f'DROP TABLE IF EXISTS "{self._table}"')

    def list_namespaces(self) -> list[str]:
        with self._guard("list namespaces"):
            rows = self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        return sorted(str(name) for (name,) in rows if RUN_IDENTIFIER_PATTERN.match(str(name)))

    def drop_namespace(self, name: str) -> None:
        name = swept_name(name, RUN_IDENTIFIER_PATTERN)
        with self._guard("drop namespace"):
            self._db.execute(f'DROP TABLE IF EXISTS "{name}"')

    def _close(self) -> None:
        db = getattr(self, "_db", None)
        if db is None:
            return
        try:
            doomed = self._file is not None and self._empty_and_ours(db)
            if doomed:
                # The last connection's close checkpoints the WAL into the file and, with ``synchronous`` on,
                # waits for the disk (fsync): 2-7 ms of each benchmark visit's clean-up here, for a file removed
                # next. Nothing of it needs to be durable.
                db.execute("PRAGMA synchronous=OFF")
        except sqlite3.Error:
            doomed = False
        db.close()
        if doomed and self._file is not None:
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{self._file}{suffix}").unlink(missing_ok=True)

    @staticmethod
    def _empty_and_ours(db: sqlite3.Connection) -> bool:
        """Whether the file is one this store created and no table is left in it."""
        (application_id,) = db.execute("PRAGMA application_id").fetchone()
        if application_id != _APPLICATION_ID:
            return False
        (tables,) = db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return int(tables) == 0
