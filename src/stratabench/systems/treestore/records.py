"""The per-node record of docs/studies/treestore.md §5.1, shared by the MongoDB, Redis and SQLite backends.

Three pieces:

- :func:`subtree_records` turns a subtree into records (the container, each
  list entry with its keys embedded, each non-key leaf, each leaf-list
  value), each with its canonical path and sort key;
- :func:`store_plan` turns a commit's diff into what a per-node backend
  must write: bulk creates, replaces and subtree deletes, and the
  user-ordered operations it must do one at a time;
- :class:`TreeBuilder` rebuilds a tree from records in sort-key order with
  a stack of "last node at depth d", then sorts each system-ordered list
  once and orders each user-ordered list by stored position.

Plus :func:`load_scopes`, what an exact path lets a backend load.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from stratabench.errors import DataError
from stratabench.systems.treestore.diff import CREATE, DELETE, NONE, REPLACE, Diff
from stratabench.systems.treestore import json_codec
from stratabench.systems.treestore.paths import Selector
from stratabench.systems.treestore.schema import CONTAINER, LEAF, LEAF_LIST, LIST, UINT32, SchemaNode
from stratabench.systems.treestore.tree import Inner, Instances, Key, predicate, typed

__all__ = ["NodeRecord", "Scope", "StorePlan", "TreeBuilder", "UO_GAP", "encode_keys", "load_scopes",
           "store_plan", "subtree_paths", "subtree_records", "tree_records"]

UO_GAP = 1024
"""The gap between appended user-ordered positions (both sysrepo database plugins)."""


class NodeRecord(NamedTuple):
    """One stored node (docs/studies/treestore.md §5.1); ``uo_order`` is assigned by the backend."""

    path: str
    sort_key: str
    depth: int
    name: str
    kind: str
    module: str | None
    keys: str | None
    value: str | None
    uo_parent: str | None
    uo_prev: str | None
    origin: str | None


def encode_keys(key: Key) -> str:
    """A list entry's keys, losslessly (a JSON array of the typed values)."""
    return json_codec.dumps(list(key)).decode()


def _step(schema: SchemaNode, key: Key | None, depth: int) -> str:
    name = f"{schema.module}:{schema.name}" if depth == 1 else schema.name
    return name if key is None else name + predicate(schema, key)


def subtree_records(schema: SchemaNode, key: Key | None, node: Any, parent_path: str, parent_sort: str,
                    depth: int, origin: str | None, uo_prev: str | None = None) -> Iterator[NodeRecord]:
    """Records of a node and everything under it, parents first."""
    step = _step(schema, key, depth)
    path = f"{parent_path}/{step}"
    sort = f"{parent_sort}{step} "
    module = schema.module if depth == 1 else None
    kind = schema.record_kind
    uo_parent = f"{parent_path}/{_step(schema, None, depth)}" if schema.user_ordered else None
    if schema.kind == LEAF:
        yield NodeRecord(path, sort, depth, schema.name, kind, module, None, str(node), None, None, origin)
        return
    if schema.kind == LEAF_LIST:
        yield NodeRecord(path, sort, depth, schema.name, kind, module, None, str(node), uo_parent, uo_prev, origin)
        return
    keys = encode_keys(key) if schema.kind == LIST and key is not None else None
    yield NodeRecord(path, sort, depth, schema.name, kind, module, keys, None, uo_parent, uo_prev, origin)
    yield from children_records(node, path, sort, depth + 1, origin)


def children_records(node: Inner, path: str, sort: str, depth: int, origin: str | None) -> Iterator[NodeRecord]:
    """Records of every child of ``node`` (key leaves live in their entry's record)."""
    own_keys = node.schema.keys if node.key is not None else ()
    for name, child in node.children.items():
        if name in own_keys:
            continue
        child_schema = node.schema.children[name]
        if type(child) is Instances:
            prev = ""
            for child_key, item in child.ordered().items():
                yield from subtree_records(child_schema, child_key, item, path, sort, depth, origin,
                                           prev if child_schema.user_ordered else None)
                prev = predicate(child_schema, child_key)
        else:
            yield from subtree_records(child_schema, None, child, path, sort, depth, origin)


def tree_records(root: Inner | None, origin: str | None = None) -> list[NodeRecord]:
    """Every record of a module tree, in sort-key order."""
    return [] if root is None else list(children_records(root, "", " ", 1, origin))


def subtree_paths(schema: SchemaNode, key: Key | None, node: Any, parent_path: str, depth: int) -> list[str]:
    """The path of every stored record of a subtree (the Redis backend deletes each)."""
    return [record.path for record in subtree_records(schema, key, node, parent_path, "", depth, None)]


@dataclass
class Deleted:
    """A deleted subtree: its top path, whether it has stored descendants, and the node itself."""

    path: str
    parent_sort: str
    has_children: bool
    schema: SchemaNode
    key: Key | None
    node: Any
    parent_path: str
    depth: int

    def records(self) -> Iterator[NodeRecord]:
        """The stored records of the subtree, its own first (lazily: a caller may stop early)."""
        return subtree_records(self.schema, self.key, self.node, self.parent_path, self.parent_sort, self.depth, None)

    @property
    def sort_key(self) -> str:
        return f"{self.parent_sort}{_step(self.schema, self.key, self.depth)} "

    @property
    def uo_parent(self) -> str:
        """The list's address (the path without this instance's predicate)."""
        return f"{self.parent_path}/{_step(self.schema, None, self.depth)}"


@dataclass
class StorePlan:
    """What one diff asks a per-node backend to write."""

    creates: list[NodeRecord] = field(default_factory=list)
    uo_creates: list[NodeRecord] = field(default_factory=list)
    deletes: list[Deleted] = field(default_factory=list)
    uo_deletes: list[Deleted] = field(default_factory=list)
    replaces: list[tuple[str, str]] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)
    """Paths of ``none`` nodes (unchanged ancestors): MongoDB refreshes their default flag and origin."""


def store_plan(diff: Diff, origin: str | None = None) -> StorePlan:
    """Split a diff into bulk operations and one-at-a-time user-ordered ones.

    User-ordered instances created inside a new subtree are placed one at a
    time as well, in list order, as the sysrepo plugins do.
    """
    plan = StorePlan()
    stack: list[tuple[Any, str, str, int]] = [(child, "", " ", 1) for child in reversed(diff.root.children.values())]
    while stack:
        node, parent_path, parent_sort, depth = stack.pop()
        schema = node.schema
        step = _step(schema, node.key, depth)
        path = f"{parent_path}/{step}"
        if node.op == CREATE:
            prev = None
            if schema.user_ordered:
                prev = "" if node.prev is None else predicate(schema, node.prev)
            for record in subtree_records(schema, node.key, node.value, parent_path, parent_sort, depth, origin, prev):
                (plan.uo_creates if record.uo_parent is not None else plan.creates).append(record)
        elif node.op == DELETE:
            has_children = schema.kind in (CONTAINER, LIST) and any(
                name not in schema.keys for name in node.value.children)
            deleted = Deleted(path, parent_sort, has_children, schema, node.key, node.value, parent_path, depth)
            (plan.uo_deletes if schema.user_ordered else plan.deletes).append(deleted)
        elif node.op == REPLACE:
            plan.replaces.append((path, str(node.value)))
        else:
            if node.op == NONE:
                plan.touched.append(path)
            sort = f"{parent_sort}{step} "
            stack.extend((child, path, sort, depth + 1) for child in reversed(node.children.values()))
    return plan


@dataclass(frozen=True)
class Scope:
    """What an exact path lets a backend load: the node's subtree plus its ancestors.

    ``path`` and ``sort_prefix`` select the subtree (for a list step without
    keys, every instance: the prefix ends in ``[``); ``ancestors`` are exact
    paths.
    """

    path: str
    sort_prefix: str
    instances_only: bool
    ancestors: tuple[str, ...]


def load_scopes(selectors: Sequence[Selector]) -> list[Scope] | None:
    """The scopes of exact selectors, or ``None`` (load everything) if any is a filter."""
    if not all(selector.exact for selector in selectors):
        return None
    scopes = []
    for selector in selectors:
        steps = list(selector.steps)
        if selector.names_key_leaf:
            steps.pop()  # a key leaf is stored in its list entry's record
        paths, sort = [], " "
        path = ""
        for depth, step in enumerate(steps, start=1):
            segment = _step(step.schema, step.key, depth)
            path = f"{path}/{segment}"
            sort = f"{sort}{segment} "
            paths.append(path)
        last = steps[-1]
        instances_only = last.schema.is_instance and last.key is None
        prefix = sort[:-1] + "[" if instances_only else sort
        scopes.append(Scope(paths[-1], prefix, instances_only, tuple(paths[:-1])))
    return scopes


class TreeBuilder:
    """Rebuild a module tree from records given in sort-key order (docs/studies/treestore.md §5 ``finish()``)."""

    def __init__(self, module: SchemaNode) -> None:
        self.root = Inner(module, None)
        self._stack: list[Any] = [self.root]
        self._orders: dict[int, tuple[Instances, dict[Key, float]]] = {}
        self._lists: dict[int, Instances] = {}

    def add_rows(self, rows: Iterable[tuple[int, str, str | None, str | None, float | None]]) -> None:
        """Records as ``(depth, name, keys, value, order)``; ``keys`` as :func:`encode_keys` wrote them,
        ``order`` the position of a user-ordered instance."""
        stack = self._stack
        lists, orders = self._lists, self._orders
        for depth, name, keys, value, order in rows:
            try:
                parent = stack[depth - 1]
                schema = parent.schema.children[name]
            except (IndexError, KeyError, AttributeError):
                raise DataError(f"stored node {name!r} at depth {depth} has no parent or schema node; "
                                "the store holds records this module does not define") from None
            kind = schema.kind
            if kind == LEAF:
                parent.children[name] = int(value) if schema.type == UINT32 else value  # type: ignore[arg-type]
                continue
            del stack[depth:]
            if kind == CONTAINER:
                node = parent.children[name] = Inner(schema, parent)
                stack.append(node)
                continue
            instances = parent.children.get(name)
            if instances is None:
                instances = parent.children[name] = Instances(schema, parent)
                lists[id(instances)] = instances
            if kind == LEAF_LIST:
                item = typed(schema, value or "")
                key: Key = (item,)
                instances.entries[key] = item
                stack.append(None)
            else:
                key = tuple(json_codec.loads(keys or "[]"))
                entry = instances.entries[key] = Inner(schema, instances, dict(zip(schema.keys, key)), key)
                stack.append(entry)
            if schema.user_ordered:
                orders.setdefault(id(instances), (instances, {}))[1][key] = order or 0.0

    def finish(self) -> Inner | None:
        """Sort system-ordered lists by key and user-ordered ones by position; ``None`` if empty."""
        for instances in self._lists.values():
            if instances.schema.user_ordered:
                positions = self._orders[id(instances)][1]
                instances.entries = dict(sorted(instances.entries.items(), key=lambda item: positions[item[0]]))
            else:
                instances.unsorted = True
                instances.ordered()
        return self.root if self.root.children else None
