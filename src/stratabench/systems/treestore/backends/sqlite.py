"""``sqlite``: one row per node in an embedded SQLite database, diffs in one transaction (our extension).

The database is ``<dir>/stratabench-treestore-<namespace>.sqlite`` in the
same RAM-backed directory as ``json-file`` (``sqlite@disk`` uses the system
temporary directory); :meth:`cleanup` deletes that file and its WAL. Rows
carry a namespace column per (datastore, module[, owner]).

A commit runs every statement of the diff inside ``BEGIN IMMEDIATE``
(prepare) and ``COMMIT``s it (commit): the only per-node backend whose
commits are atomic. Creates are one ``executemany``; subtree deletes are
two range deletes on the sort key (a parent's sort key is a prefix of its
descendants'); user-ordered instances are placed one statement at a time.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from stratabench.systems.treestore import user_order
from stratabench.systems.treestore.backends import TREE_BACKENDS
from stratabench.systems.treestore.backends.base import (
    OPERATIONAL, Access, Owner, TreeBackend, filesystem_type, permitted, ram_directory,
)
from stratabench.systems.treestore.diff import Diff
from stratabench.systems.treestore.records import (
    UO_GAP, NodeRecord, Scope, TreeBuilder, store_plan, tree_records,
)
from stratabench.systems.treestore.schema import SchemaNode
from stratabench.systems.treestore.tree import Inner

__all__ = ["SUCCESSOR", "SqliteBackend"]

PRAGMAS = {"journal_mode": "WAL", "synchronous": "NORMAL"}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS node (
    ns TEXT NOT NULL, path TEXT NOT NULL, sort_key TEXT NOT NULL, depth INTEGER NOT NULL,
    name TEXT NOT NULL, kind TEXT NOT NULL, module TEXT, keys TEXT, value TEXT, dflt INTEGER NOT NULL DEFAULT 0,
    uo_parent TEXT, uo_order INTEGER, uo_prev TEXT, origin TEXT,
    PRIMARY KEY (ns, path)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS node_sort ON node (ns, sort_key);
CREATE INDEX IF NOT EXISTS node_uo_prev ON node (ns, uo_parent, uo_prev);
CREATE INDEX IF NOT EXISTS node_uo_order ON node (ns, uo_parent, uo_order);
CREATE TABLE IF NOT EXISTS ns_meta (
    ns TEXT PRIMARY KEY, last_modified_ns INTEGER NOT NULL, version INTEGER NOT NULL,
    owner INTEGER NOT NULL, grp INTEGER NOT NULL, perm INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS uo_max (
    ns TEXT NOT NULL, uo_parent TEXT NOT NULL, max_order INTEGER NOT NULL, PRIMARY KEY (ns, uo_parent));
"""

_INSERT = ("INSERT INTO node (ns, path, sort_key, depth, name, kind, module, keys, value, uo_parent, uo_prev, "
           "origin, uo_order) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
_COLUMNS = "depth, name, keys, value, uo_order"
SUCCESSOR = ("SELECT path, uo_order FROM node INDEXED BY node_uo_prev "
             "WHERE ns = ? AND uo_parent = ? AND uo_prev = ?")
"""The instance after a predecessor. Without statistics the planner prefers the primary key (ns) and
scans the whole namespace, once per placed instance: `create user ordered items` became quadratic in N."""


def _after(prefix: str) -> str:
    """The smallest string above every string that starts with ``prefix`` (binary collation)."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _namespace(module: SchemaNode, ds: str, owner: Owner | None) -> str:
    base = f"{ds}:{module.name}"
    return base if owner is None else f"{base}+{owner[0]}+{owner[1]}"


class _Positions:
    """:class:`~stratabench.systems.treestore.user_order.PositionStore` on one namespace, one statement per call."""

    def __init__(self, db: sqlite3.Connection, ns: str) -> None:
        self.db, self.ns = db, ns

    def max_order(self, uo_parent: str) -> int | None:
        row = self.db.execute("SELECT max_order FROM uo_max WHERE ns = ? AND uo_parent = ?", (self.ns, uo_parent)).fetchone()
        return None if row is None else int(row[0])

    def set_max(self, uo_parent: str, order: int) -> None:
        self.db.execute("INSERT OR REPLACE INTO uo_max VALUES (?, ?, ?)", (self.ns, uo_parent, order))

    def order_of(self, path: str) -> int:
        return int(self.db.execute("SELECT uo_order FROM node WHERE ns = ? AND path = ?", (self.ns, path)).fetchone()[0])

    def prev_of(self, path: str) -> str:
        return str(self.db.execute("SELECT uo_prev FROM node WHERE ns = ? AND path = ?", (self.ns, path)).fetchone()[0])

    def successor(self, uo_parent: str, prev: str) -> tuple[str, int] | None:
        row = self.db.execute(SUCCESSOR, (self.ns, uo_parent, prev)).fetchone()
        return None if row is None else (row[0], int(row[1]))

    def set_order(self, path: str, order: int) -> None:
        self.db.execute("UPDATE node SET uo_order = ? WHERE ns = ? AND path = ?", (order, self.ns, path))

    def set_prev(self, path: str, prev: str) -> None:
        self.db.execute("UPDATE node SET uo_prev = ? WHERE ns = ? AND path = ?", (prev, self.ns, path))

    def insert(self, record: NodeRecord, order: int) -> None:
        self.db.execute(_INSERT, (self.ns, *record, order))


@TREE_BACKENDS.register("sqlite")
class SqliteBackend(TreeBackend):
    """One row per node in an embedded SQLite file (RAM-backed directory); diffs in one transaction."""

    atomic = True

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        return (sqlite3.Error, OSError)

    def _open(self) -> None:
        base = self.directory or self._default_directory()
        self.file = Path(base) / f"stratabench-treestore-{self.namespace}.sqlite"
        with self.guard("create its database"):
            db = self._connect_file()
            db.executescript(_SCHEMA)
            db.close()

    def _default_directory(self) -> Path:
        return ram_directory()

    def _connect_file(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.file, isolation_level=None, check_same_thread=False)
        for name, value in PRAGMAS.items():
            db.execute(f"PRAGMA {name} = {value}")
        return db

    def connect(self) -> sqlite3.Connection:
        with self.guard("connect"):
            return self._connect_file()

    def disconnect(self, conn: Any) -> None:
        conn.close()

    def install(self, module: SchemaNode, ds: str, access: Access) -> None:
        with self.guard("install"):
            db = self._connect_file()
            db.execute("INSERT OR REPLACE INTO ns_meta VALUES (?, ?, 0, ?, ?, ?)",
                       (_namespace(module, ds, None), time.time_ns(), access.uid, access.gid, access.mode))
            db.close()

    def uninstall(self, module: SchemaNode, ds: str) -> None:
        base = _namespace(module, ds, None)
        with self.guard("uninstall"):
            db = self._connect_file()
            for table in ("node", "uo_max", "ns_meta"):
                db.execute(f"DELETE FROM {table} WHERE ns = ? OR (ns >= ? AND ns < ?)", (base, base + "+", base + ","))
            db.close()

    def load(self, conn: Any, module: SchemaNode, ds: str, owner: Owner | None,
             scopes: list[Scope] | None) -> Inner | None:
        ns = _namespace(module, ds, owner)
        with self.guard("load"):
            if scopes is None:
                rows = conn.execute(f"SELECT {_COLUMNS} FROM node WHERE ns = ? ORDER BY sort_key", (ns,)).fetchall()
            else:
                rows = self._load_scopes(conn, ns, scopes)
        builder = TreeBuilder(module)
        builder.add_rows(rows)
        return builder.finish()

    def _load_scopes(self, conn: Any, ns: str, scopes: list[Scope]) -> list[Any]:
        parts, args = [], []
        ancestors = sorted({path for scope in scopes for path in scope.ancestors})
        for scope in scopes:
            parts.append(f"SELECT sort_key, {_COLUMNS} FROM node WHERE ns = ? AND sort_key >= ? AND sort_key < ?")
            args += [ns, scope.sort_prefix, _after(scope.sort_prefix)]
        if ancestors:
            parts.append(f"SELECT sort_key, {_COLUMNS} FROM node WHERE ns = ? AND path IN "
                         f"({', '.join('?' * len(ancestors))})")
            args += [ns, *ancestors]
        rows = conn.execute(" UNION ".join(parts) + " ORDER BY sort_key", args).fetchall()
        return [row[1:] for row in rows]

    def store_prepare(self, conn: Any, module: SchemaNode, ds: str, owner: Owner | None,
                      diff: Diff | None, tree: Inner | None, origin: str | None) -> None:
        ns = _namespace(module, ds, owner)
        with self.guard("store"):
            conn.execute("BEGIN IMMEDIATE")
            try:
                if diff is None:
                    self._replace(conn, ns, tree, origin)
                else:
                    self._apply(conn, ns, diff, origin)
                if tree is None and owner is not None:
                    self._replace(conn, ns, None, None)
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def _replace(self, conn: Any, ns: str, tree: Inner | None, origin: str | None) -> None:
        conn.execute("DELETE FROM node WHERE ns = ?", (ns,))
        conn.execute("DELETE FROM uo_max WHERE ns = ?", (ns,))
        orders: dict[str, int] = {}
        rows = []
        for record in tree_records(tree, origin):
            order = None
            if record.uo_parent is not None:
                order = orders[record.uo_parent] = orders.get(record.uo_parent, 0) + UO_GAP
            rows.append((ns, *record, order))
        conn.executemany(_INSERT, rows)
        conn.executemany("INSERT INTO uo_max VALUES (?, ?, ?)", [(ns, parent, top) for parent, top in orders.items()])

    def _apply(self, conn: Any, ns: str, diff: Diff, origin: str | None) -> None:
        plan = store_plan(diff, origin)
        positions = _Positions(conn, ns)
        for deleted in plan.uo_deletes:
            user_order.unlink(positions, deleted.path, deleted.uo_parent)
        everything = plan.deletes + plan.uo_deletes
        if everything:
            conn.executemany("DELETE FROM node WHERE ns = ? AND path = ?", [(ns, d.path) for d in everything])
            below = [d for d in everything if d.has_children]
            conn.executemany("DELETE FROM node WHERE ns = ? AND sort_key > ? AND sort_key < ?",
                             [(ns, d.sort_key, _after(d.sort_key)) for d in below])
            conn.executemany("DELETE FROM uo_max WHERE ns = ? AND uo_parent >= ? AND uo_parent < ?",
                             [(ns, d.path + sep, _after(d.path + sep)) for d in below for sep in "/["])
        if plan.replaces:
            conn.executemany("UPDATE node SET value = ?, dflt = 0 WHERE ns = ? AND path = ?",
                             [(value, ns, path) for path, value in plan.replaces])
        if origin is not None and plan.touched:
            conn.executemany("UPDATE node SET origin = ? WHERE ns = ? AND path = ?",
                             [(origin, ns, path) for path in plan.touched])
        if plan.creates:
            conn.executemany(_INSERT, [(ns, *record, None) for record in plan.creates])
        for record in plan.uo_creates:
            user_order.place(positions, record)

    def store_commit(self, conn: Any, module: SchemaNode, ds: str, owner: Owner | None,
                     diff: Diff | None, tree: Inner | None, origin: str | None) -> None:
        with self.guard("commit"):
            try:
                conn.execute("UPDATE ns_meta SET last_modified_ns = ?, version = version + 1 WHERE ns = ?",
                             (time.time_ns(), _namespace(module, ds, None)))
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _meta(self, conn: Any, module: SchemaNode, ds: str) -> tuple[Any, ...] | None:
        with self.guard("read its permission record"):
            row: tuple[Any, ...] | None = conn.execute(
                "SELECT owner, grp, perm, last_modified_ns, version FROM ns_meta WHERE ns = ?",
                (_namespace(module, ds, None),)).fetchone()
        return row

    def access(self, conn: Any, module: SchemaNode, ds: str) -> tuple[bool, bool]:
        row = self._meta(conn, module, ds)
        return (False, False) if row is None else permitted(row[0], row[1], row[2])

    def last_modified(self, conn: Any, module: SchemaNode, ds: str) -> int | None:
        row = self._meta(conn, module, ds)
        return None if row is None else int(row[3])

    def data_version(self, conn: Any, module: SchemaNode, ds: str) -> int | None:
        row = self._meta(conn, module, ds)
        return None if row is None else int(row[4])

    def owners(self, conn: Any, module: SchemaNode) -> list[Owner]:
        base = _namespace(module, OPERATIONAL, None) + "+"
        with self.guard("list owners"):
            rows = conn.execute("SELECT DISTINCT ns FROM node WHERE ns >= ? AND ns < ?", (base, _after(base))).fetchall()
        return [tuple(int(part) for part in ns[len(base):].split("+")) for (ns,) in rows]  # type: ignore[misc]

    def cleanup(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.file}{suffix}").unlink(missing_ok=True)

    def header(self) -> dict[str, Any]:
        return {**super().header(), "sqlite_file_dir": str(self.file.parent),
                "sqlite_dir_filesystem": filesystem_type(self.file.parent), "sqlite_pragmas": dict(PRAGMAS),
                "sqlite_version": sqlite3.sqlite_version}
