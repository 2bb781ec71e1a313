"""User-ordered positions, one instance at a time, as both sysrepo database plugins keep them (docs/studies/treestore.md §5.1).

Appending takes the list's stored maximum plus a gap of 1,024. Inserting
between two neighbours takes the midpoint of their positions; if they are
adjacent integers, the successor and every following instance shift by +1.
The successor is found through its ``uo_prev`` (the key predicate of its
predecessor) and rewritten to point at the new instance. Deleting an
instance rewrites its successor's ``uo_prev`` to the deleted one's.

Each step is a separate backend call: that is what makes ``create user
ordered items`` cost the reference databases several times their own bulk
creates, and the study must keep it that way.
"""

from __future__ import annotations

from typing import Protocol

from stratabench.systems.treestore.records import UO_GAP, NodeRecord

__all__ = ["PositionStore", "place", "unlink"]


class PositionStore(Protocol):
    """The per-call primitives a backend gives the position scheme."""

    def max_order(self, uo_parent: str) -> int | None: ...
    def set_max(self, uo_parent: str, order: int) -> None: ...
    def order_of(self, path: str) -> int: ...
    def prev_of(self, path: str) -> str: ...
    def successor(self, uo_parent: str, prev: str) -> tuple[str, int] | None: ...
    def set_order(self, path: str, order: int) -> None: ...
    def set_prev(self, path: str, prev: str) -> None: ...
    def insert(self, record: NodeRecord, order: int) -> None: ...


def _own_predicate(record_path: str, uo_parent: str) -> str:
    return record_path[len(uo_parent):]


def _shift(store: PositionStore, uo_parent: str, path: str, order: int) -> None:
    """Move the instance at ``path`` (at ``order``) and any adjacent followers up by one."""
    following = store.successor(uo_parent, _own_predicate(path, uo_parent))
    if following is not None and following[1] == order + 1:
        _shift(store, uo_parent, *following)
    store.set_order(path, order + 1)
    top = store.max_order(uo_parent)
    if top is not None and order + 1 > top:
        store.set_max(uo_parent, order + 1)


def place(store: PositionStore, record: NodeRecord) -> None:
    """Insert a user-ordered instance after the one its ``uo_prev`` names ("" = first)."""
    uo_parent = record.uo_parent
    assert uo_parent is not None and record.uo_prev is not None
    prev = record.uo_prev
    successor = store.successor(uo_parent, prev)
    if successor is None:
        top = store.max_order(uo_parent)
        order = (top or 0) + UO_GAP
        store.set_max(uo_parent, order)
    else:
        prev_order = store.order_of(uo_parent + prev) if prev else 0
        next_path, next_order = successor
        if next_order - prev_order > 1:
            order = (prev_order + next_order) // 2
        else:
            _shift(store, uo_parent, next_path, next_order)
            order = prev_order + 1
        store.set_prev(next_path, _own_predicate(record.path, uo_parent))
    store.insert(record, order)


def unlink(store: PositionStore, path: str, uo_parent: str) -> None:
    """Before deleting the instance at ``path``: point its successor at its predecessor."""
    successor = store.successor(uo_parent, _own_predicate(path, uo_parent))
    if successor is not None:
        store.set_prev(successor[0], store.prev_of(path))
