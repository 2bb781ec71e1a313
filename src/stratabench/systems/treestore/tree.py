"""The instance tree: nodes that know their schema, parent and children.

A module tree is an :class:`Inner` whose schema is the module. Inner nodes
(the module, containers, list entries) hold ``children``: name → a leaf's
value (``int`` or ``str``), an :class:`Inner` (container) or an
:class:`Instances` (every instance of one list or leaf-list). Leaves are
values in their parent's dictionary rather than objects of their own: the
parent and schema of a leaf are its dictionary's owner and that owner's
schema child, and the study's trees are mostly leaves.

:class:`Instances` maps a typed key tuple to its entry, so a lookup by key
is O(1), as libyang's hashes are. A system-ordered list is kept sorted by
key: appending in order keeps it sorted, anything else marks it for one
sort before its order is next needed.

The canonical form (docs/studies/treestore.md §2.2) is RFC 7951 JSON with the top-level members
qualified by the module name, children in schema order, lists in canonical
order, written compactly; :func:`tree_hash` is its SHA-1 (docs/studies/treestore.md §3.3).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, MutableMapping
from operator import itemgetter
from typing import Any, TypeAlias

from stratabench.errors import DataError
from stratabench.systems.treestore import json_codec
from stratabench.systems.treestore.schema import CONTAINER, LEAF, LEAF_LIST, LIST, UINT32, SchemaNode

__all__ = [
    "Inner", "Instances", "Key", "Value", "build_child", "build_inner", "copy_inner", "copy_instances", "copy_tree", "from_document", "from_json", "inner_document", "is_empty", "node_document",
    "literal", "merge_into", "top_level", "predicate", "to_document", "to_json", "tree_hash", "typed",
]

Value: TypeAlias = int | str
Key: TypeAlias = tuple[Value, ...]
Entries: TypeAlias = MutableMapping[Key, Any]
"""A list's instances by key, in order: a ``dict``, or the incremental core's :class:`~.persistent.Chunked`."""
_FIRST = itemgetter(0)


class Inner:
    """The module, a container or a list entry (``key`` set for an entry)."""

    __slots__ = ("children", "key", "parent", "schema")

    def __init__(self, schema: SchemaNode, parent: Inner | Instances | None,
                 children: dict[str, Any] | None = None, key: Key | None = None) -> None:
        self.schema = schema
        self.parent = parent
        self.children: dict[str, Any] = {} if children is None else children
        self.key = key


class Instances:
    """Every instance of one list (key → :class:`Inner`) or leaf-list ((value,) → value)."""

    __slots__ = ("entries", "parent", "schema", "unsorted")

    def __init__(self, schema: SchemaNode, parent: Inner) -> None:
        self.schema = schema
        self.parent = parent
        self.entries: Entries = {}
        self.unsorted = False

    def add(self, key: Key, item: Any, after: Key | None | bool = True) -> None:
        """Insert a new instance: last (``after=True``), first (``None``) or after ``key``.

        Positions other than last apply to user-ordered instances only;
        system-ordered ones are kept sorted regardless.
        """
        entries = self.entries
        if type(entries) is not dict:  # a persistent list places its instances itself (kept in order)
            entries.insert(key, item, after)  # type: ignore[attr-defined]
            return
        if after is True or not self.schema.user_ordered:
            if entries and not self.unsorted and not self.schema.user_ordered and key < next(reversed(entries)):
                self.unsorted = True
            entries[key] = item
            return
        items = list(entries.items())
        at = 0 if after is None else next(i for i, (k, _) in enumerate(items) if k == after) + 1
        items.insert(at, (key, item))
        self.entries = dict(items)

    def last_key(self) -> Key | None:
        """The key of the last instance in order (``None`` if there is none)."""
        return next(reversed(self.entries), None)  # type: ignore[arg-type]

    def ordered(self) -> Entries:
        """The entries in their canonical order (sorting once if needed)."""
        if self.unsorted:
            self.entries = dict(sorted(self.entries.items(), key=_FIRST))
            self.unsorted = False
        return self.entries

    def previous(self, key: Key) -> Key | None:
        """The key of the instance before ``key`` in order, ``None`` for the first."""
        before = None
        for current in self.ordered():
            if current == key:
                return before
            before = current
        raise KeyError(key)


def typed(schema: SchemaNode, text: str) -> Value:
    """A leaf's value from its canonical string (a predicate literal or a stored value)."""
    if schema.type == UINT32:
        try:
            return int(text)
        except ValueError:
            raise DataError(f"{schema.name}: {text!r} is not a uint32") from None
    return text


def literal(value: Value) -> str:
    """A quoted XPath literal: single quotes unless the value holds one."""
    text = str(value)
    return f'"{text}"' if "'" in text else f"'{text}'"


def predicate(schema: SchemaNode, key: Key) -> str:
    """``[k1='0'][k2='str0']`` for a list entry, ``[.='v']`` for a leaf-list value."""
    if schema.kind == LEAF_LIST:
        return f"[.={literal(key[0])}]"
    texts = [str(value) for value in key]
    if any("'" in text for text in texts):
        return "".join(f"[{name}={literal(text)}]" for name, text in zip(schema.keys, texts))
    return schema.predicate_format.format(*texts)  # one call per path: every stored node has one


# -- canonical document ------------------------------------------------------

def inner_document(node: Inner) -> dict[str, Any]:
    children = node.children
    order = node.schema.children
    if node.schema.kind == LIST and node.schema.leaves_only:
        return {name: children[name] for name in order if name in children}
    out: dict[str, Any] = {}
    for name, schema in order.items():
        if name in children:
            out[name] = node_document(schema, children[name])
    return out


def node_document(schema: SchemaNode, child: Any) -> Any:
    if schema.kind == LEAF:
        return child
    if schema.kind == CONTAINER:
        return inner_document(child)
    if schema.kind == LEAF_LIST:
        return list(child.ordered().values())
    if schema.leaves_only:
        order = tuple(schema.children)
        return [{name: ch[name] for name in order if name in ch}
                for ch in (entry.children for entry in child.ordered().values())]
    return [inner_document(entry) for entry in child.ordered().values()]


def to_document(root: Inner | None) -> dict[str, Any]:
    """The canonical JSON-like document of a module tree (``{}`` for an empty one)."""
    if root is None:
        return {}
    module = root.schema.name
    children = root.children
    return {f"{module}:{name}": node_document(schema, children[name])
            for name, schema in root.schema.children.items() if name in children}


def to_json(root: Inner | None) -> bytes:
    """The compact canonical JSON of a module tree."""
    return json_codec.dumps(to_document(root))


def tree_hash(root: Inner | None) -> str:
    """SHA-1 of the compact canonical JSON (docs/studies/treestore.md §3.3)."""
    return hashlib.sha1(to_json(root)).hexdigest()


def build_inner(schema: SchemaNode, parent: Inner | Instances | None, obj: Any, key: Key | None = None) -> Inner:
    if not isinstance(obj, dict):
        raise DataError(f"{schema.name}: expected an object, got {type(obj).__name__}")
    node = Inner(schema, parent, None, key)
    children = node.children
    for name, value in obj.items():
        child = schema.children.get(name)
        if child is None:
            raise DataError(f"{schema.name}: no schema node {name!r}")
        children[name] = build_child(child, node, value)
    return node


def build_child(schema: SchemaNode, parent: Inner, value: Any) -> Any:
    if schema.kind == LEAF:
        return value
    if schema.kind == CONTAINER:
        return build_inner(schema, parent, value)
    if not isinstance(value, list):
        raise DataError(f"{schema.name}: expected an array, got {type(value).__name__}")
    try:
        return build_instances(schema, parent, value)
    except TypeError:
        # A key that is an array or an object cannot be hashed, and keys of two types
        # cannot be sorted; the leaf types are checked later, by validation, so that
        # the well-formed path pays for no check per entry here.
        raise DataError(f"{schema.name}: a key ({', '.join(schema.keys) or 'the value'}) is not a "
                        "number or a string, or keys of one list mix the two") from None


def build_instances(schema: SchemaNode, parent: Inner, value: list[Any]) -> Instances:
    instances = Instances(schema, parent)
    add = instances.add
    if schema.kind == LEAF_LIST:
        for item in value:
            add((item,), item)
    elif schema.leaves_only:
        # The parsed object becomes the entry's children as it is: no copy per entry,
        # and the keys come out of C (itemgetter), the order check too (sorted() of sorted input is linear).
        keys = schema.keys
        try:
            if len(keys) == 1:
                only = keys[0]
                key_list: list[Key] = [(item[only],) for item in value]
            else:
                key_list = list(map(itemgetter(*keys), value))
        except (KeyError, TypeError):
            raise DataError(f"{schema.name}: an entry lacks a key ({', '.join(keys)})") from None
        instances.entries = {key: Inner(schema, instances, item, key) for key, item in zip(key_list, value)}
        if not schema.user_ordered and key_list != sorted(key_list):
            instances.unsorted = True
    else:
        for item in value:
            key = tuple([item.get(name) for name in schema.keys])
            add(key, build_inner(schema, instances, item, key))
    if len(instances.entries) != len(value):
        raise DataError(f"{schema.name}: duplicate instances")
    return instances


def top_level(module: SchemaNode, document: dict[str, Any]) -> Iterator[tuple[SchemaNode, Any]]:
    """The (schema, value) of each top-level member of a document, whose names carry the module prefix."""
    prefix = f"{module.name}:"
    for qualified, value in document.items():
        name = qualified.removeprefix(prefix)
        schema = module.children.get(name)
        if schema is None or name == qualified:
            raise DataError(f"module {module.name}: unexpected top-level member {qualified!r}")
        yield schema, value


def from_document(module: SchemaNode, document: dict[str, Any]) -> Inner | None:
    """The module tree of a canonical document; ``None`` when it is empty. Does not validate."""
    root = Inner(module, None)
    for schema, value in top_level(module, document):
        root.children[schema.name] = build_child(schema, root, value)
    return root if root.children else None


def from_json(module: SchemaNode, data: bytes) -> Inner | None:
    """Parse compact canonical JSON into a module tree (``None`` when empty)."""
    try:
        document = json_codec.loads(data)
    except ValueError as exc:
        raise DataError(f"module {module.name}: not JSON: {exc}") from None
    return from_document(module, document)


# -- copy, merge ---------------------------------------------------------------

def copy_inner(node: Inner, parent: Inner | Instances | None) -> Inner:
    new = Inner(node.schema, parent, None, node.key)
    children = new.children
    for name, child in node.children.items():
        if type(child) is Inner:
            children[name] = copy_inner(child, new)
        elif type(child) is Instances:
            children[name] = copy_instances(child, new)
        else:
            children[name] = child
    return new


def copy_instances(instances: Instances, parent: Inner) -> Instances:
    new = Instances(instances.schema, parent)
    new.unsorted = instances.unsorted
    schema = instances.schema
    if schema.kind == LEAF_LIST:
        new.entries = dict(instances.entries)
    elif schema.leaves_only:
        new.entries = {key: Inner(schema, new, entry.children.copy(), key)
                       for key, entry in instances.entries.items()}
    else:
        new.entries = {key: copy_inner(entry, new) for key, entry in instances.entries.items()}
    return new


def copy_tree(root: Inner | None) -> Inner | None:
    """A deep copy (O(N), as sysrepo's copy of its cached tree)."""
    return None if root is None else copy_inner(root, None)


def merge_into(target: Inner, source: Inner) -> None:
    """Merge ``source`` into ``target`` in place: leaves overwrite, instances join."""
    children = target.children
    for name, child in source.children.items():
        mine = children.get(name)
        if type(child) is Inner:
            if mine is None:
                children[name] = copy_inner(child, target)
            else:
                merge_into(mine, child)
        elif type(child) is Instances:
            if mine is None:
                children[name] = copy_instances(child, target)
                continue
            for key, entry in child.entries.items():
                existing = mine.entries.get(key)
                if existing is None:
                    mine.add(key, copy_inner(entry, mine) if type(entry) is Inner else entry)
                elif type(entry) is Inner:
                    merge_into(existing, entry)
        else:
            children[name] = child


def is_empty(root: Inner | None) -> bool:
    return root is None or not root.children


def walk_values(root: Inner) -> Iterator[tuple[SchemaNode, Any]]:
    """Every (schema, leaf value) of the tree; for tests and checks."""
    for name, child in root.children.items():
        schema = root.schema.children[name]
        if type(child) is Inner:
            yield from walk_values(child)
        elif type(child) is Instances:
            for entry in child.entries.values():
                if type(entry) is Inner:
                    yield from walk_values(entry)
                else:
                    yield schema, entry
        else:
            yield schema, child
