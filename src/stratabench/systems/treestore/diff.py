"""Edits applied to a tree, and the diff the core builds while applying them (docs/studies/treestore.md §3.4).

A diff mirrors the changed part of the module. Each :class:`DiffNode` has one
operation: ``create`` (a new node; ``value`` is the live node or leaf value,
so later edits of the same commit inside it are included), ``delete`` (a
removed node; ``value`` is the detached subtree or old leaf value),
``replace`` (a leaf's new ``value`` and ``old`` value) or ``none`` (an
unchanged ancestor of a change). User-ordered instances carry ``prev``, the
key of their predecessor (``None`` if first), at the time they were placed.

Edits that change nothing leave the diff empty: setting a leaf to its value,
deleting what is not there.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from stratabench.errors import DataError, StratabenchError, UsageError
from stratabench.systems.treestore.paths import Selector
from stratabench.systems.treestore.schema import CONTAINER, LEAF, LEAF_LIST, UINT32, SchemaNode
from stratabench.systems.treestore.tree import (
    Inner, Instances, Key, Value, build_child, build_inner, inner_document, predicate, top_level,
)

__all__ = ["CREATE", "DELETE", "NONE", "REPLACE", "Diff", "DiffNode", "EditError", "apply_delete", "compare",
           "apply_merge", "apply_set"]

CREATE = "create"
DELETE = "delete"
REPLACE = "replace"
NONE = "none"

Trail = list[tuple[SchemaNode, Key | None]]


class EditError(StratabenchError):
    """An edit cannot apply: a strict set of an existing node, or a change of a key."""

    exit_code = 65


class DiffNode:
    """One node of a diff; ``children`` by (name, key)."""

    __slots__ = ("children", "key", "old", "op", "prev", "schema", "value")

    def __init__(self, op: str, schema: SchemaNode, key: Key | None = None, value: Any = None,
                 old: Any = None, prev: Key | None = None) -> None:
        self.op = op
        self.schema = schema
        self.key = key
        self.value = value
        self.old = old
        self.prev = prev
        self.children: dict[tuple[Any, ...], DiffNode] = {}

    def changed(self) -> bool:
        """Whether this node or a descendant changes anything."""
        return self.op != NONE or any(child.changed() for child in self.children.values())

    def document(self) -> dict[str, Any]:
        """A JSON-like form, for the transport to subscribers (full subtrees for create and delete)."""
        out: dict[str, Any] = {"op": self.op, "name": self.schema.name}
        if self.key is not None:
            out["key"] = list(self.key)
        if self.op in (CREATE, DELETE):
            value = self.value
            out["value"] = (inner_document(value) if type(value) is Inner else value)
        elif self.op == REPLACE:
            out["value"], out["old"] = self.value, self.old
        if self.schema.user_ordered and self.op == CREATE:
            out["prev"] = None if self.prev is None else list(self.prev)
        if self.children:
            out["children"] = [child.document() for child in self.children.values()]
        return out


class Diff:
    """The diff of one commit, built edit by edit."""

    def __init__(self, module: SchemaNode) -> None:
        self.root = DiffNode(NONE, module)

    def __bool__(self) -> bool:
        return self.root.changed()

    def document(self) -> dict[str, Any]:
        return self.root.document()

    def record(self, trail: Trail, op: str, value: Any = None, old: Any = None, prev: Key | None = None) -> None:
        """Note that the node at ``trail`` was created, deleted or replaced."""
        node = self.root
        for schema, key in trail[:-1]:
            if node.op == CREATE:
                return  # inside a subtree created by this commit: the live node carries it
            child = node.children.get((schema.name, key))
            if child is None:
                child = node.children[(schema.name, key)] = DiffNode(NONE, schema, key)
            node = child
        if node.op == CREATE:
            return
        schema, key = trail[-1]
        ident = (schema.name, key)
        existing = node.children.get(ident)
        if existing is None:
            node.children[ident] = DiffNode(op, schema, key, value, old, prev)
        elif op == CREATE:
            if existing.op == DELETE and schema.kind in (LEAF, LEAF_LIST) and not schema.user_ordered:
                if existing.value == value:
                    del node.children[ident]
                else:
                    node.children[ident] = DiffNode(REPLACE, schema, key, value, existing.value)
            else:
                # Re-created after a delete in the same commit: delete first, then create.
                node.children[(*ident, "deleted")] = node.children.pop(ident)
                node.children[ident] = DiffNode(op, schema, key, value, old, prev)
        elif op == DELETE:
            if existing.op == CREATE:
                del node.children[ident]
            elif existing.op == REPLACE:
                node.children[ident] = DiffNode(DELETE, schema, key, existing.old)
            else:
                existing.op, existing.value = DELETE, value
                existing.children = {k: c for k, c in existing.children.items() if c.op == DELETE}
        elif existing.op == CREATE:
            existing.value = value
        elif existing.op == REPLACE:
            if existing.old == value:
                del node.children[ident]
            else:
                existing.value = value

    def walk(self) -> Iterator[tuple[str, DiffNode, str]]:
        """Every changed node with its canonical path, parents first (``none`` nodes included)."""
        stack: list[tuple[DiffNode, str]] = [(child, "") for child in reversed(self.root.children.values())]
        while stack:
            node, parent = stack.pop()
            schema = node.schema
            name = f"{schema.module}:{schema.name}" if not parent else schema.name
            path = f"{parent}/{name}" + ("" if node.key is None else predicate(schema, node.key))
            yield node.op, node, path
            stack.extend((child, path) for child in reversed(node.children.values()))


def _descend(root: Inner, selector: Selector, diff: Diff, create: bool) -> tuple[Any, Trail, bool] | None:
    """Walk to the parent of the last step; create missing ancestors when ``create``.

    Returns the parent, the trail of the last step, and whether an ancestor
    was created (then the diff already records it).
    """
    node: Inner = root
    trail: Trail = []
    created = False
    steps = selector.steps
    for step in steps[:-1]:
        schema = step.schema
        trail.append((schema, step.key))
        child = node.children.get(schema.name)
        if schema.kind == CONTAINER:
            if child is None:
                if not create:
                    return None
                child = node.children[schema.name] = Inner(schema, node)
                if not created:
                    diff.record(trail, CREATE, child)
                    created = True
            node = child
            continue
        if step.key is None:
            raise UsageError(f"edit {selector.text!r}: list step {schema.name} needs its keys")
        if child is None:
            if not create:
                return None
            child = node.children[schema.name] = Instances(schema, node)
        entry = child.entries.get(step.key)
        if entry is None:
            if not create:
                return None
            prev = child.last_key() if schema.user_ordered else None
            entry = Inner(schema, child, dict(zip(schema.keys, step.key)), step.key)
            child.add(step.key, entry)
            if not created:
                diff.record(trail, CREATE, entry, prev=prev)
                created = True
        node = entry
    last = steps[-1]
    trail.append((last.schema, last.key))
    return node, trail, created


def apply_set(root: Inner, selector: Selector, value: Value | None, diff: Diff, *, strict: bool = False,
              after: Key | None | bool = True) -> None:
    """``set`` (non-strict: creates what is missing) or ``set!`` (strict: fails if the node exists).

    ``value`` is the leaf's value; ``None`` for a container, list entry or
    leaf-list instance named by the path. ``after`` places a new
    user-ordered instance: last (``True``), first (``None``) or after a key.
    """
    if not selector.exact:
        raise UsageError(f"edit {selector.text!r}: edits need an exact path, not a filter")
    found = _descend(root, selector, diff, create=True)
    assert found is not None
    parent, trail, created = found
    schema, key = trail[-1]
    children = parent.children
    name = schema.name
    if schema.kind == LEAF:
        if parent.key is not None and name in parent.schema.keys:
            if children[name] != value:
                raise EditError(f"edit {selector.text!r}: a key leaf cannot change")
            if strict and not created:
                raise EditError(f"edit {selector.text!r}: the node exists")
            return
        old = children.get(name)
        if old is not None and strict:
            raise EditError(f"edit {selector.text!r}: the node exists")
        if old == value:
            return
        children[name] = value
        if not created:
            diff.record(trail, CREATE if old is None else REPLACE, value, old)
        return
    if schema.kind == CONTAINER:
        if name in children:
            if strict:
                raise EditError(f"edit {selector.text!r}: the node exists")
            return
        child = children[name] = Inner(schema, parent)
        if not created:
            diff.record(trail, CREATE, child)
        return
    if key is None:
        raise UsageError(f"edit {selector.text!r}: a list or leaf-list step needs its key")
    instances = children.get(name)
    if instances is None:
        instances = children[name] = Instances(schema, parent)
    if key in instances.entries:
        if strict:
            raise EditError(f"edit {selector.text!r}: the node exists")
        return
    item: Any = key[0] if schema.kind == LEAF_LIST else Inner(schema, instances, dict(zip(schema.keys, key)), key)
    prev: Key | None = None
    if after is True:
        prev = instances.last_key()
    elif after is not False:
        prev = after
    instances.add(key, item, after)
    if not created:
        diff.record(trail, CREATE, item, prev=prev if schema.user_ordered else None)


def _detach(parent: Inner, name: str, key: Key | None) -> Any:
    child = parent.children[name]
    if key is None and type(child) is not Instances:
        return parent.children.pop(name)
    item = child.entries.pop(key)
    if not child.entries:
        del parent.children[name]
    return item


def apply_delete(root: Inner, selector: Selector, diff: Diff) -> None:
    """``del``: remove the node(s) if present; a list step without keys removes every instance."""
    if not selector.exact:
        raise UsageError(f"edit {selector.text!r}: edits need an exact path, not a filter")
    found = _descend(root, selector, diff, create=False)
    if found is None:
        return
    parent, trail, _ = found
    schema, key = trail[-1]
    child = parent.children.get(schema.name)
    if child is None:
        return
    if parent.key is not None and schema.name in parent.schema.keys:
        raise EditError(f"edit {selector.text!r}: a key leaf cannot be deleted alone")
    if type(child) is Instances and key is None:
        for entry_key, entry in list(child.ordered().items()):
            diff.record([*trail[:-1], (schema, entry_key)], DELETE, entry)
        del parent.children[schema.name]
    elif type(child) is Instances:
        if key not in child.entries:
            return
        diff.record(trail, DELETE, _detach(parent, schema.name, key))
    else:
        diff.record(trail, DELETE, _detach(parent, schema.name, None))
    _drop_empty_ancestors(parent, trail[:-1], diff)


def _drop_empty_ancestors(node: Inner, trail: Trail, diff: Diff) -> None:
    # A non-presence container exists only while it has children (docs/studies/treestore.md §2.4).
    while trail and node.schema.kind == CONTAINER and not node.schema.presence and not node.children:
        parent = node.parent
        assert isinstance(parent, Inner)
        diff.record(trail, DELETE, _detach(parent, node.schema.name, None))
        node, trail = parent, trail[:-1]


def apply_merge(root: Inner, document: dict[str, Any], diff: Diff) -> None:
    """Merge a canonical document into the tree (a batch edit)."""
    for schema, value in top_level(root.schema, document):
        _merge_child(root, schema, value, [(schema, None)], diff)


def _merge_child(parent: Inner, schema: SchemaNode, value: Any, trail: Trail, diff: Diff) -> None:
    children = parent.children
    name = schema.name
    existing = children.get(name)
    if schema.kind == LEAF:
        if existing != value:
            children[name] = value
            diff.record(trail, CREATE if existing is None else REPLACE, value, existing)
        return
    if existing is None:
        built = children[name] = build_child(schema, parent, value)
        if schema.kind == CONTAINER:
            diff.record(trail, CREATE, built)
        else:
            prev = None
            for key, item in built.ordered().items():
                diff.record([*trail[:-1], (schema, key)], CREATE, item, prev=prev if schema.user_ordered else None)
                prev = key
        return
    if schema.kind == CONTAINER:
        if not isinstance(value, dict):
            raise DataError(f"merge: {name}: expected an object, got {type(value).__name__}")
        for child_name, child_value in value.items():
            child_schema = schema.children.get(child_name)
            if child_schema is None:
                raise UsageError(f"merge: {name} has no child {child_name!r}")
            _merge_child(existing, child_schema, child_value, [*trail, (child_schema, None)], diff)
        return
    if not isinstance(value, list):
        raise DataError(f"merge: {name}: expected an array, got {type(value).__name__}")
    base = trail[:-1]
    for item in value:
        if schema.kind == LEAF_LIST:
            _check_key_value(schema, name, item)
            if (item,) not in existing.entries:
                prev = existing.last_key()
                existing.add((item,), item)
                diff.record([*base, (schema, (item,))], CREATE, item, prev=prev if schema.user_ordered else None)
            continue
        if not isinstance(item, dict):
            raise DataError(f"merge: {name}: an entry is {item!r}, not an object")
        key = tuple([item.get(k) for k in schema.keys])
        for key_name, part in zip(schema.keys, key):
            _check_key_value(schema.children[key_name], name, part)
        entry = existing.entries.get(key)
        if entry is None:
            prev = existing.last_key()
            entry = build_inner(schema, existing, item, key)
            existing.add(key, entry)
            diff.record([*base, (schema, key)], CREATE, entry, prev=prev if schema.user_ordered else None)
        else:
            for child_name, child_value in item.items():
                child_schema = schema.children.get(child_name)
                if child_schema is None:
                    raise UsageError(f"merge: {name} has no child {child_name!r}")
                if child_name in schema.keys:
                    continue
                _merge_child(entry, child_schema, child_value, [*base, (schema, key), (child_schema, None)], diff)


def _check_key_value(leaf: SchemaNode, list_name: str, value: Any) -> None:
    """A merged key (or leaf-list value) has its leaf's type: it is compared with the list's other keys at once."""
    wanted = int if leaf.type == UINT32 else str
    if value is None:
        raise DataError(f"merge: {list_name}: an entry lacks its key {leaf.name}")
    if not isinstance(value, wanted) or isinstance(value, bool):
        raise DataError(f"merge: {list_name}: {leaf.name} is {value!r}, not a {leaf.type}")


def compare(module: SchemaNode, old: Inner | None, new: Inner | None) -> Diff:
    """The diff from one tree to another (for operational views, docs/studies/treestore.md §4.3 step 3)."""
    diff = Diff(module)
    _compare_inner(diff.root, old or Inner(module, None), new or Inner(module, None))
    return diff


def _compare_inner(into: DiffNode, old: Inner, new: Inner) -> None:
    old_children, new_children = old.children, new.children
    schemas = new.schema.children
    for name, schema in schemas.items():
        before, after = old_children.get(name), new_children.get(name)
        if before is None and after is None:
            continue
        if schema.kind == LEAF:
            if before == after:
                continue
            op = CREATE if before is None else DELETE if after is None else REPLACE
            into.children[(name, None)] = DiffNode(op, schema, None, before if after is None else after,
                                                   before if op == REPLACE else None)
        elif schema.kind == CONTAINER:
            if before is None or after is None:
                into.children[(name, None)] = DiffNode(CREATE if before is None else DELETE, schema, None,
                                                       after if before is None else before)
                continue
            child = DiffNode(NONE, schema)
            _compare_inner(child, before, after)
            if child.children:
                into.children[(name, None)] = child
        else:
            _compare_instances(into, schema, before, after)


def _compare_instances(into: DiffNode, schema: SchemaNode, before: Instances | None, after: Instances | None) -> None:
    old_entries = before.ordered() if before is not None else {}
    new_entries = after.ordered() if after is not None else {}
    name = schema.name
    for key, item in old_entries.items():
        if key not in new_entries:
            into.children[(name, key)] = DiffNode(DELETE, schema, key, item)
    prev: Key | None = None
    for key, item in new_entries.items():
        existing = old_entries.get(key)
        if existing is None and key not in old_entries:
            into.children[(name, key)] = DiffNode(CREATE, schema, key, item, prev=prev if schema.user_ordered else None)
        elif type(item) is Inner and type(existing) is Inner and existing.children != item.children:
            child = DiffNode(NONE, schema, key)
            _compare_inner(child, existing, item)
            if child.children:
                into.children[(name, key)] = child
        prev = key
