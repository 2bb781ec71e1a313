"""SQLite's WAL checkpoint taken out of the writes (``DeferredUpkeep``), on real files: the store and the row table.

Exact, never timed: the write after a checkpoint restarts the log, and the
``-wal`` file's header counts the restarts (its checkpoint sequence, bytes
12-15); a deferred store's log never restarts until its upkeep runs, and
the write after that starts it again from its first frame.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from stratabench.datasets import comments
from stratabench.errors import StoreError
from stratabench.layers.stores import open_store
from stratabench.layers.stores.base import DeferredUpkeep
from stratabench.layers.stores.rows import open_row_table
from stratabench.options import RunOptions

#: Writes enough to pass SQLite's 1,000 pages of log more than once: 20 KB values are 5-6 pages each.
WRITES = 400


def wal_bytes(database: Path) -> int:
    return Path(f"{database}-wal").stat().st_size


def restarts(database: Path) -> int:
    """The log's checkpoint sequence: one more each time a write starts it again after a checkpoint."""
    return int.from_bytes(Path(f"{database}-wal").read_bytes()[12:16], "big")


def writer(kind: str, database: Path) -> tuple[DeferredUpkeep, Callable[[int], None], Callable[[], None]]:
    """A store or a row table on ``database``: itself, a write of new content (the ``i``-th), and its close."""
    if kind == "store":
        store = open_store(f"sqlite://{database}", namespace="unit")

        def put(i: int) -> None:
            store.put(b"entry", os.urandom(20_000))

        assert isinstance(store, DeferredUpkeep)
        return store, put, store.close
    table = open_row_table("sqlite", f"sqlite://{database}", comments.SCHEMA, namespace="unit")
    records = comments.rows(40)
    text = comments.SCHEMA.names.index("text")

    def upsert(i: int) -> None:
        # New text each time: an upsert of the same values leaves every page as it was and logs nothing.
        table.write([(*row[:text], f"{row[text]} {i}", *row[text + 1:]) for row in records])

    assert isinstance(table, DeferredUpkeep)
    return table, upsert, table.close


@pytest.mark.parametrize("kind", ["store", "rows"])
def test_sqlite_checkpoints_inside_a_write_unless_deferred(tmp_path: Path, kind: str) -> None:
    # The premise: left alone, some write runs the checkpoint, and the log restarts.
    _, write, close = writer(kind, tmp_path / "plain.db")
    try:
        write(0)
        first = restarts(tmp_path / "plain.db")
        for i in range(1, WRITES):
            write(i)
        assert restarts(tmp_path / "plain.db") > first
    finally:
        close()


@pytest.mark.parametrize("kind", ["store", "rows"])
def test_deferred_writes_never_checkpoint_and_the_upkeep_restarts_the_log(tmp_path: Path, kind: str) -> None:
    database = tmp_path / "deferred.db"
    target, write, close = writer(kind, database)
    try:
        upkeep = target.defer_upkeep()
        write(0)
        sequence = restarts(database)
        for upkeeps in range(2):
            for i in range(1, WRITES):
                write(i)
                assert restarts(database) == sequence, f"write {i} after {upkeeps} upkeeps restarted the log"
            upkeep()
            high_water = wal_bytes(database)
            write(0)
            sequence += 1
            # Started again from its first frame: over the old frames, the file no longer.
            assert (restarts(database), wal_bytes(database)) == (sequence, high_water)
    finally:
        close()


def test_an_upkeep_another_connection_keeps_from_finishing_is_a_one_line_error(tmp_path: Path) -> None:
    database = tmp_path / "shared.db"
    store = open_store(f"sqlite://{database}", namespace="unit",
                       options=RunOptions(settings={"sqlite.busy_timeout": "0"}))
    assert isinstance(store, DeferredUpkeep)
    reader = sqlite3.connect(database)
    try:
        upkeep = store.defer_upkeep()
        store.put(b"entry", b"before")
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM sqlite_master").fetchall()  # a read that holds the log's frames
        store.put(b"entry", b"after")
        with pytest.raises(StoreError, match=r"checkpoint could not finish while another connection reads the "
                                             r"database \(close it\)") as caught:
            upkeep()
        assert "\n" not in str(caught.value), str(caught.value)
    finally:
        reader.close()
        store.close()
