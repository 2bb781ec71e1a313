"""The SQLite backend's per-instance lookups use their index, so user-ordered inserts stay linear in N."""

from __future__ import annotations

import sqlite3

from stratabench.systems.treestore.backends.sqlite import _SCHEMA, SUCCESSOR


def test_the_successor_lookup_searches_its_index_not_the_namespace() -> None:
    db = sqlite3.connect(":memory:")
    db.executescript(_SCHEMA)
    plan = " ".join(row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {SUCCESSOR}", ("ns", "/list", "")))
    assert "USING INDEX node_uo_prev (ns=? AND uo_parent=? AND uo_prev=?)" in plan
    db.close()
