"""The two ways a commit gets its working tree and checks it: the study's ``sysrepo`` core and ``incremental``.

- ``sysrepo`` (the default; docs/studies/treestore.md §4.2): a commit on a current cache works on
  a deep copy of the cached tree (O(N)), and every commit that changes data
  validates the whole tree (O(N)), as sysrepo does with libyang.
- ``incremental``: a commit on a current cache forks the cached tree and
  copies only the path to each node its edits can change
  (:mod:`.persistent`); a commit validates only what its diff changed, plus
  what those changes can break: a created subtree is checked whole (leaf
  types, keys of each list entry, empty non-presence containers), a replaced
  leaf by its type. Keys stay unique by construction (instances are held by
  key and an edit cannot change a key leaf), and a delete breaks nothing in
  this schema (a non-presence container goes with its last child; there are
  no mandatory nodes or min/max-elements). This is exact only on a valid
  base tree: the cache is what the last commit validated or what the
  store holds (running data are trusted, docs/studies/treestore.md §2.4).

A change the incremental check rejects is named by the full pass, so a
commit is refused with the same one-line message on both cores (the full
walk runs only on that refusal).

A commit on an uncached connection loads its own tree on both cores, so
nothing is copied there; the cores differ in the validation only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from stratabench.errors import UsageError
from stratabench.systems.treestore.diff import CREATE, DELETE, REPLACE, Diff, DiffNode
from stratabench.systems.treestore.persistent import copy_for_merge, copy_path, fork, ownership
from stratabench.systems.treestore.schema import CONTAINER, LEAF, LEAF_LIST, LIST, SchemaNode
from stratabench.systems.treestore.tree import Inner, copy_tree
from stratabench.systems.treestore.validate import (
    ValidationError, _check_flat_entries, _check_inner, _value_ok, validate,
)

__all__ = ["CORES", "DEFAULT_CORE", "CommitCore", "IncrementalCore", "SysrepoCore", "commit_core", "validate_changes"]

DEFAULT_CORE = "sysrepo"


class CommitCore:
    """How a commit copies the tree it starts from and validates the result."""

    name: ClassVar[str]

    def working_copy(self, base: Inner | None, edits: Sequence[tuple[Any, ...]]) -> Inner | None:
        """A tree the session's ``edits`` may change, leaving ``base`` (a cache) as it was."""
        raise NotImplementedError

    def check(self, tree: Inner, diff: Diff) -> None:
        """Refuse (:class:`ValidationError`) a running tree that breaks its schema after ``diff``."""
        raise NotImplementedError


class SysrepoCore(CommitCore):
    """A deep copy of the cached tree, a validation of the whole tree (the study's core)."""

    name = "sysrepo"

    def working_copy(self, base: Inner | None, edits: Sequence[tuple[Any, ...]]) -> Inner | None:
        return copy_tree(base)

    def check(self, tree: Inner, diff: Diff) -> None:
        validate(tree)


class IncrementalCore(CommitCore):
    """Path copying on a persistent tree; validation of the changed subtrees."""

    name = "incremental"

    def working_copy(self, base: Inner | None, edits: Sequence[tuple[Any, ...]]) -> Inner | None:
        if base is None:
            return None
        work = fork(base)
        owned = ownership(work)
        for edit in edits:
            if edit[0] == "merge":
                copy_for_merge(owned, work, edit[1])
            else:
                copy_path(owned, work, edit[1])
        return work

    def check(self, tree: Inner, diff: Diff) -> None:
        validate_changes(tree, diff)


CORES: dict[str, CommitCore] = {core.name: core for core in (SysrepoCore(), IncrementalCore())}


def commit_core(name: str) -> CommitCore:
    """The core called ``name``; a one-line error naming the known ones otherwise."""
    try:
        return CORES[name]
    except KeyError:
        raise UsageError(f"treestore core {name!r} is not known; use one of {', '.join(CORES)}") from None


def validate_changes(tree: Inner, diff: Diff) -> None:
    """Check what ``diff`` changed in ``tree`` (a valid tree before it); refuse as the full pass would."""
    try:
        _check_changes(diff.root, f"/{tree.schema.name}:")
    except ValidationError as refused:
        validate(tree)  # names the first offending node in tree order, as the sysrepo core does
        raise refused  # (the full pass accepted it: a disagreement the property test looks for)


def _check_changes(node: DiffNode, where: str) -> None:
    # Entries created in a list of leaves are checked together, a column at a time, as the full pass
    # checks a whole list: a bulk create of N entries costs what the full pass of N entries costs.
    flat: dict[str, tuple[SchemaNode, list[dict[str, Any]]]] = {}
    for change in node.children.values():
        op, schema = change.op, change.schema
        if op == DELETE:
            continue
        if op == CREATE and schema.kind == LIST and schema.leaves_only:
            flat.setdefault(schema.name, (schema, []))[1].append(change.value.children)
        elif op == CREATE:
            _check_created(schema, change.value, f"{where}/{schema.name}")
        elif op == REPLACE:
            if not _value_ok(schema.type, change.value):
                raise ValidationError(f"{where}/{schema.name}: {change.value!r} is not a valid {schema.type}")
        else:
            _check_changes(change, f"{where}/{schema.name}")
    for name, (schema, entries) in flat.items():
        _check_flat_entries(entries, schema, f"{where}/{name}")


def _check_created(schema: SchemaNode, value: Any, where: str) -> None:
    """The full pass's checks of one created node and its subtree (``where`` as the full pass names it)."""
    if schema.kind in (LEAF, LEAF_LIST):
        if not _value_ok(schema.type, value):
            raise ValidationError(f"{where}: {value!r} is not a valid {schema.type}")
    elif schema.kind == CONTAINER:
        if not value.children and not schema.presence:
            raise ValidationError(f"{where}: an empty non-presence container is kept")
        _check_inner(value, where)
    else:
        if any(key not in value.children for key in schema.keys):
            raise ValidationError(f"{where}: an entry lacks a key ({', '.join(schema.keys)})")
        _check_inner(value, where)
