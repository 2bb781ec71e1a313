"""The validation pass that stands in for YANG (docs/studies/treestore.md §2.4): a full walk of the tree.

It is deliberately a pass over every node, not a check of the changed ones:
sysrepo validates the whole module on every running commit that changes
data, and that linear cost is part of what the study measures.
"""

from __future__ import annotations

from functools import partial
from operator import attrgetter, is_not, itemgetter, methodcaller
from typing import Any

from stratabench.errors import StratabenchError
from stratabench.systems.treestore.schema import CONTAINER, LEAF, LEAF_LIST, STRING, UINT32, UINT32_MAX, SchemaNode
from stratabench.systems.treestore.tree import Inner, Instances

__all__ = ["ValidationError", "validate"]

_ABSENT = object()
"""What a column reads for a leaf an entry does not have (``None`` is a value, and an invalid one)."""
_PRESENT = partial(is_not, _ABSENT)
_CHILDREN = attrgetter("children")


class ValidationError(StratabenchError):
    """A tree breaks its schema: the commit is refused and nothing is stored."""

    exit_code = 65


def _value_ok(type_: str | None, value: Any) -> bool:
    if type_ == UINT32:
        return type(value) is int and 0 <= value <= UINT32_MAX
    return type_ == STRING and type(value) is str


def _check_inner(node: Inner, where: str) -> None:
    schema = node.schema
    allowed = schema.children
    for name, child in node.children.items():
        child_schema = allowed.get(name)
        if child_schema is None:
            raise ValidationError(f"{where}: no schema node {name!r}")
        kind = child_schema.kind
        if kind == LEAF:
            if not _value_ok(child_schema.type, child):
                raise ValidationError(f"{where}/{name}: {child!r} is not a valid {child_schema.type}")
        elif kind == CONTAINER:
            if type(child) is not Inner:
                raise ValidationError(f"{where}/{name}: not a container")
            if not child.children and not child_schema.presence:
                raise ValidationError(f"{where}/{name}: an empty non-presence container is kept")
            _check_inner(child, f"{where}/{name}")
        else:
            if type(child) is not Instances:
                raise ValidationError(f"{where}/{name}: not a {kind}")
            _check_instances(child, child_schema, f"{where}/{name}")


def _check_instances(instances: Instances, schema: SchemaNode, where: str) -> None:
    # In canonical order, so the first offending entry named is the same however the list was built
    # (a list an edit left unsorted is sorted here once instead of when it is next written).
    entries = instances.ordered().values()
    if schema.kind == LEAF_LIST:
        values = list(entries)
        for value in values:
            if not _value_ok(schema.type, value):
                raise ValidationError(f"{where}: {value!r} is not a valid {schema.type}")
        if len(set(values)) != len(values):
            raise ValidationError(f"{where}: duplicate values")
        return
    keys = schema.keys
    if schema.leaves_only:
        _check_flat_entries(list(map(_CHILDREN, entries)), schema, where)
        return
    seen = set()
    for entry in entries:
        try:
            seen.add(tuple([entry.children[key] for key in keys]))
        except KeyError:
            raise ValidationError(f"{where}: an entry lacks a key ({', '.join(keys)})") from None
        _check_inner(entry, where)
    if len(seen) != len(instances.entries):
        raise ValidationError(f"{where}: duplicate keys ({', '.join(keys)})")


def _check_flat_entries(children: list[dict[str, Any]], schema: SchemaNode, where: str) -> None:
    """The checks of :func:`_check_inner` for entries that hold only leaves, a column at a time.

    The study's lists are all like this, and this pass runs on every commit:
    each check is one C-level pass (map, set, min, max) over a column of
    values instead of Python code per leaf. Still every entry and every leaf:
    columns are read with ``map`` of C getters, never a Python loop.
    """
    keys = schema.keys
    columns: dict[str, list[Any]] = {}
    try:
        for key in keys:
            columns[key] = list(map(itemgetter(key), children))
    except KeyError:
        raise ValidationError(f"{where}: an entry lacks a key ({', '.join(keys)})") from None
    # Unique key tuples, re-derived from the entries: a first key unique on its own settles it
    # without building N tuples (the study's k1 is); otherwise the tuples are compared.
    first = columns[keys[0]]
    if len(set(first)) != len(children) and len(set(zip(*(columns[key] for key in keys)))) != len(children):
        raise ValidationError(f"{where}: duplicate keys ({', '.join(keys)})")
    for name in schema.children:
        if name not in columns:
            columns[name] = list(filter(_PRESENT, map(methodcaller("get", name, _ABSENT), children)))
    # Every member of every entry is a schema leaf: the members counted equal the known ones found.
    if sum(map(len, children)) != sum(map(len, columns.values())):
        allowed = schema.children
        unknown = next(name for entry in children for name in entry if name not in allowed)
        raise ValidationError(f"{where}: no schema node {unknown!r}")
    for name, leaf in schema.children.items():
        column = columns[name]
        if not column:
            continue
        if leaf.type == UINT32:
            if set(map(type, column)) != {int} or min(column) < 0 or max(column) > UINT32_MAX:
                bad = next(v for v in column if type(v) is not int or not 0 <= v <= UINT32_MAX)
                raise ValidationError(f"{where}/{name}: {bad!r} is not a valid uint32")
        elif set(map(type, column)) != {str}:
            bad = next(v for v in column if type(v) is not str)
            raise ValidationError(f"{where}/{name}: {bad!r} is not a valid string")

def validate(root: Inner | None) -> None:
    """Check every node of a module tree against its schema.

    Raises
    ------
    ValidationError
        Naming the first offending node.
    """
    if root is not None:
        _check_inner(root, f"/{root.schema.name}:")
