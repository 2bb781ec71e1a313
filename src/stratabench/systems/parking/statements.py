"""SQL statements counted by kind, through SQLAlchemy's engine events.

Kinds are those of the study's Table 2 plus the transaction ends:
``SELECT``, ``SELECT FOR UPDATE``, ``UPDATE``, ``INSERT``, ``DELETE``,
``COMMIT``, ``ROLLBACK`` (and ``OTHER`` for anything else a server sends).
A statement is counted once as the server hands it to the driver: an
``executemany`` is one statement here (SQLAlchemy 2 batches the two balance
updates of a transfer that way, docs/studies/parking.md §11.4), while the database may execute
it row by row. On SQLite the ``FOR UPDATE`` clause is dropped by the dialect,
so locked reads count as plain SELECTs there, as the statements sent are.

Transaction ends come from the connection's ``commit``/``rollback`` events;
the ``BEGIN`` that :func:`..schema.create_parking_engine` sends on SQLite is
not counted (the other databases begin implicitly).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy import Engine

__all__ = ["KINDS", "StatementCounter", "kind_of"]

KINDS = ("SELECT", "SELECT FOR UPDATE", "UPDATE", "INSERT", "DELETE", "COMMIT", "ROLLBACK", "OTHER")


def kind_of(statement: str) -> str | None:
    """The kind of one SQL statement, or None for a ``BEGIN`` (not counted)."""
    head = statement.lstrip("( \n\t").split(None, 1)[0].upper() if statement.strip() else ""
    if head in ("BEGIN", "START"):
        return None
    if head in ("SELECT", "WITH"):
        return "SELECT FOR UPDATE" if " FOR UPDATE" in statement.upper() else "SELECT"
    if head in ("UPDATE", "INSERT", "DELETE", "COMMIT", "ROLLBACK"):
        return head
    return "OTHER"


class StatementCounter:
    """Counts what one engine sends; :meth:`snapshot` reads the totals so far."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def attach(self, engine: Engine) -> None:
        """Listen to ``engine``'s statements and transaction ends from now on."""
        from sqlalchemy import event

        event.listen(engine, "before_cursor_execute", self._statement)
        event.listen(engine, "commit", self._commit)
        event.listen(engine, "rollback", self._rollback)

    def _statement(self, _conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        kind = kind_of(statement)
        if kind is not None:
            self.counts[kind] += 1

    def _commit(self, _conn: Any) -> None:
        self.counts["COMMIT"] += 1

    def _rollback(self, _conn: Any) -> None:
        self.counts["ROLLBACK"] += 1

    def snapshot(self) -> dict[str, int]:
        """Every kind's total so far (zeros included)."""
        return {kind: self.counts[kind] for kind in KINDS}

    def reset(self) -> None:
        """Start counting from zero (after start-up, before the first measured run)."""
        self.counts.clear()
