"""The schema that stands in for YANG: named nodes with kinds, types and keys.

Only what the study needs and the backends must support: containers (with
or without presence), keyed lists, leaves and leaf-lists, each list or
leaf-list ordered by the system (sorted by typed keys) or by the user.
Leaf types are ``uint32`` and ``string``. :data:`PERF` is the study's module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final

__all__ = [
    "CONTAINER", "LEAF", "LEAF_LIST", "LIST", "MODULE", "PERF", "STRING", "UINT32", "UINT32_MAX",
    "SchemaNode", "container", "leaf", "leaf_list", "keyed_list", "module",
]

MODULE: Final = "module"
CONTAINER: Final = "container"
LIST: Final = "list"
LEAF: Final = "leaf"
LEAF_LIST: Final = "leaf-list"

UINT32: Final = "uint32"
STRING: Final = "string"
UINT32_MAX: Final = 4_294_967_295


@dataclass(eq=False)
class SchemaNode:
    """One schema node; ``children`` in schema order, ``parent`` set by the module.

    Attributes
    ----------
    kind
        :data:`MODULE`, :data:`CONTAINER`, :data:`LIST`, :data:`LEAF` or :data:`LEAF_LIST`.
    type
        :data:`UINT32` or :data:`STRING` for leaves and leaf-lists.
    keys
        The key leaves of a list, in schema order.
    user_ordered
        Whether a list or leaf-list keeps the user's order (else sorted by key).
    presence
        Whether an empty container may exist (a presence container).
    """

    name: str
    kind: str
    type: str | None = None
    keys: tuple[str, ...] = ()
    user_ordered: bool = False
    presence: bool = False
    children: dict[str, SchemaNode] = field(default_factory=dict, repr=False)
    module: str = ""
    parent: SchemaNode | None = field(default=None, repr=False)

    @property
    def record_kind(self) -> str:
        """The ``kind`` field of a per-node record (docs/studies/treestore.md §5.1)."""
        if self.kind in (LIST, LEAF_LIST) and self.user_ordered:
            return f"user-ordered {self.kind}"
        return self.kind

    @property
    def leaves_only(self) -> bool:
        """Whether every child is a leaf: such entries copy and parse as flat dicts."""
        return all(child.kind == LEAF for child in self.children.values())

    @property
    def is_instance(self) -> bool:
        """A list or leaf-list: a step that names instances, with a predicate."""
        return self.kind in (LIST, LEAF_LIST)

    @cached_property
    def predicate_format(self) -> str:
        """``[k1='{}'][k2='{}']``: a list entry's predicate, to fill with its key values."""
        return "".join(f"[{key}='{{}}']" for key in self.keys)

    def key_types(self) -> tuple[str | None, ...]:
        return tuple(self.children[key].type for key in self.keys)


def leaf(name: str, type_: str) -> SchemaNode:
    return SchemaNode(name, LEAF, type=type_)


def leaf_list(name: str, type_: str, *, user_ordered: bool = False) -> SchemaNode:
    return SchemaNode(name, LEAF_LIST, type=type_, user_ordered=user_ordered)


def container(name: str, children: Sequence[SchemaNode], *, presence: bool = False) -> SchemaNode:
    return SchemaNode(name, CONTAINER, presence=presence, children={child.name: child for child in children})


def keyed_list(name: str, keys: Sequence[str], children: Sequence[SchemaNode], *,
               user_ordered: bool = False) -> SchemaNode:
    node = SchemaNode(name, LIST, keys=tuple(keys), user_ordered=user_ordered,
                      children={child.name: child for child in children})
    if list(node.children)[: len(keys)] != list(keys):
        raise ValueError(f"list {name}: keys must be its first children, in order")
    return node


def module(name: str, children: Sequence[SchemaNode]) -> SchemaNode:
    """A module: sets every node's ``module`` and ``parent``."""
    root = SchemaNode(name, MODULE, children={child.name: child for child in children}, module=name)
    stack = [root]
    while stack:
        node = stack.pop()
        for child in node.children.values():
            child.parent = node
            child.module = name
            stack.append(child)
    return root


PERF: Final = module("perf", [
    container("cont", [
        keyed_list("lst", ("k1", "k2"), [leaf("k1", UINT32), leaf("k2", STRING), leaf("l", STRING)]),
        keyed_list("usr-lst", ("k",), [leaf("k", UINT32), leaf("l", STRING)], user_ordered=True),
    ], presence=True),
])
"""Module ``perf`` of the study (docs/studies/treestore.md §2.1)."""
