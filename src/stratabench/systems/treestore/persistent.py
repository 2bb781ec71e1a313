"""The incremental core's persistent tree: a commit copies only the path to each node it changes.

A module tree is forked for a commit by copying its root; before each edit
applies, :func:`copy_path` copies every existing node the edit can reach
(the nodes along its path, or along a merged document), so the edit
functions of :mod:`.diff` mutate copies only and the tree they started
from (the connection's cache) stays as it was. Everything off those paths
is shared between the two trees.

An inner node copies in O(its children). A list is the exception: it may
hold N entries, so its instances live in a :class:`Chunked` map, a two-level
persistent B-tree: a directory of chunks of at most :data:`CHUNK` × 2
entries each, in order. Forking one copies the directory (N / :data:`CHUNK`
pointers); changing an entry copies its chunk (≤ 2 × :data:`CHUNK`), once per
commit. A loaded tree's lists are plain dicts and become chunked the first
time a commit forks them.

Limits: a user-ordered list is found by key with a scan of its chunks
(N / :data:`CHUNK` probes); the study edits user-ordered lists only without
a cache. Nodes keep parent pointers (the tree model's): a shared node
points at the version in which it was last copied, so an old version's
path stays alive as long as a node it parents is shared; copied list
entries keep none, so single-item commits do not pile versions up.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, ItemsView, KeysView, MutableMapping, ValuesView
from itertools import chain
from typing import Any

from stratabench.systems.treestore.paths import Selector
from stratabench.systems.treestore.schema import CONTAINER, LEAF, SchemaNode
from stratabench.systems.treestore.tree import Inner, Instances, Key, top_level

__all__ = ["CHUNK", "Chunked", "copy_for_merge", "copy_path", "fork", "ownership"]

CHUNK = 256
"""Entries per chunk after a split (a chunk splits when it reaches twice this)."""

_MISSING = object()


class Chunked(MutableMapping[Key, Any]):
    """A list's instances in order, chunked so that a fork shares every chunk it does not change.

    System-ordered lists are kept sorted by key: a lookup bisects the first
    keys of the chunks. User-ordered lists keep the user's order, and a
    lookup scans the chunks (N / :data:`CHUNK` hash probes).
    """

    __slots__ = ("_chunks", "_firsts", "_owned", "_size", "sorted")

    def __init__(self, chunks: list[dict[Key, Any]], *, sorted: bool) -> None:
        self._chunks = chunks
        self._firsts: list[Key] = [next(iter(chunk)) for chunk in chunks]
        self._size = sum(map(len, chunks))
        self._owned = {id(chunk) for chunk in chunks}
        self.sorted = sorted

    @classmethod
    def of(cls, entries: MutableMapping[Key, Any], *, sorted: bool) -> Chunked:
        """The chunked form of entries given in order."""
        items = list(entries.items())
        return cls([dict(items[at:at + CHUNK]) for at in range(0, len(items), CHUNK)], sorted=sorted)

    def fork(self) -> Chunked:
        """A copy sharing every chunk; from now on neither side changes a shared chunk in place."""
        twin = Chunked.__new__(Chunked)
        twin._chunks, twin._firsts, twin._size, twin.sorted = list(self._chunks), list(self._firsts), self._size, self.sorted
        twin._owned = set()
        self._owned = set()
        return twin

    # -- finding -----------------------------------------------------------

    def _index(self, key: Key) -> int:
        """The chunk that holds ``key`` or would hold it; -1 when there are no chunks or it belongs nowhere."""
        if self.sorted:
            return max(bisect_right(self._firsts, key) - 1, 0) if self._chunks else -1
        for at, chunk in enumerate(self._chunks):
            if key in chunk:
                return at
        return -1

    def _writable(self, at: int) -> dict[Key, Any]:
        chunk = self._chunks[at]
        if id(chunk) not in self._owned:
            chunk = self._chunks[at] = dict(chunk)
            self._owned.add(id(chunk))
        return chunk

    def _replace(self, at: int, chunk: dict[Key, Any]) -> None:
        """Put a rebuilt chunk at ``at`` (splitting it when it has grown to twice :data:`CHUNK`)."""
        if len(chunk) >= 2 * CHUNK:
            items = list(chunk.items())
            parts = [dict(items[:CHUNK]), dict(items[CHUNK:])]
        else:
            parts = [chunk]
        self._chunks[at:at + 1] = parts
        self._firsts[at:at + 1] = [next(iter(part)) for part in parts]
        self._owned.update(map(id, parts))

    # -- the mapping -----------------------------------------------------------

    def __getitem__(self, key: Key) -> Any:
        at = self._index(key)
        if at < 0:
            raise KeyError(key)
        return self._chunks[at][key]

    def get(self, key: Key, default: Any = None) -> Any:
        at = self._index(key)
        return default if at < 0 else self._chunks[at].get(key, default)

    def __contains__(self, key: object) -> bool:
        return self.get(key, _MISSING) is not _MISSING  # type: ignore[arg-type]

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Key]:
        return chain.from_iterable(self._chunks)

    def __reversed__(self) -> Iterator[Key]:
        return chain.from_iterable(map(reversed, reversed(self._chunks)))

    def keys(self) -> KeysView[Key]:
        return KeysView(self)

    def values(self) -> ValuesView[Any]:
        return _Values(self)

    def items(self) -> ItemsView[Key, Any]:
        return _Items(self)

    def __setitem__(self, key: Key, item: Any) -> None:
        """Replace an instance in place, or insert a new one (in key order, or last when user-ordered)."""
        at = self._index(key)
        if at >= 0 and key in self._chunks[at]:
            self._writable(at)[key] = item
            return
        self.insert(key, item, True)

    def __delitem__(self, key: Key) -> None:
        self.pop(key)

    def pop(self, key: Key, default: Any = _MISSING) -> Any:
        at = self._index(key)
        if at < 0 or key not in self._chunks[at]:
            if default is _MISSING:
                raise KeyError(key)
            return default
        chunk = self._writable(at)
        item = chunk.pop(key)
        self._size -= 1
        if chunk:
            self._firsts[at] = next(iter(chunk))
        else:
            del self._chunks[at], self._firsts[at]
        return item

    def insert(self, key: Key, item: Any, after: Key | None | bool = True) -> None:
        """Insert a new instance: in key order when sorted; else last (``True``), first (``None``) or after a key."""
        self._size += 1
        if not self._chunks:
            self._append_chunk({key: item})
            return
        if self.sorted or after is True:
            at = self._index(key) if self.sorted else len(self._chunks) - 1
            chunk = self._chunks[at]
            keys = list(chunk)
            position = bisect_left(keys, key) if self.sorted else len(keys)
        elif after is None:
            at, position = 0, 0
            chunk = self._chunks[0]
        else:
            assert after is not False
            at = self._index(after)
            chunk = self._chunks[at]
            position = list(chunk).index(after) + 1
        if position == len(chunk):
            writable = self._writable(at)
            writable[key] = item
            if len(writable) >= 2 * CHUNK:
                self._replace(at, writable)
            return
        items = list(chunk.items())
        items.insert(position, (key, item))
        self._replace(at, dict(items))

    def _append_chunk(self, chunk: dict[Key, Any]) -> None:
        self._chunks.append(chunk)
        self._firsts.append(next(iter(chunk)))
        self._owned.add(id(chunk))


class _Values(ValuesView[Any]):
    _mapping: Chunked

    def __iter__(self) -> Iterator[Any]:
        return chain.from_iterable(map(dict.values, self._mapping._chunks))


class _Items(ItemsView[Key, Any]):
    _mapping: Chunked

    def __iter__(self) -> Iterator[tuple[Key, Any]]:
        return chain.from_iterable(map(dict.items, self._mapping._chunks))


# -- path copying ----------------------------------------------------------------

def fork(root: Inner) -> Inner:
    """A new version of a module tree: its root copied, everything under it shared."""
    return Inner(root.schema, None, dict(root.children), root.key)


def _own_inner(node: Inner, parent: Inner | Instances | None) -> Inner:
    return Inner(node.schema, parent, dict(node.children), node.key)


def _own_instances(instances: Instances, parent: Inner) -> Instances:
    copy = Instances(instances.schema, parent)
    entries = instances.entries
    if type(entries) is Chunked:
        copy.entries = entries.fork()
    else:  # a loaded list: chunked from now on (once, O(N))
        copy.entries = Chunked.of(instances.ordered(), sorted=not instances.schema.user_ordered)
    return copy


class _Owned:
    """The nodes this commit has copied (or created): edits may change them in place."""

    def __init__(self, root: Inner) -> None:
        self.ids = {id(root)}
        self.keep: list[Any] = [root]  # keeps the ids above from being reused during the commit

    def child(self, parent: Inner, name: str) -> Any:
        """``parent``'s child ``name``, copied into ``parent`` first if this commit does not own it yet."""
        child = parent.children.get(name)
        if child is None or parent.schema.children[name].kind == LEAF or id(child) in self.ids:
            return child
        copy = _own_instances(child, parent) if type(child) is Instances else _own_inner(child, parent)
        parent.children[name] = copy
        self.ids.add(id(copy))
        self.keep.append(copy)
        return copy

    def entry(self, instances: Instances, key: Key) -> Inner | None:
        entry = instances.entries.get(key)
        if type(entry) is not Inner or id(entry) in self.ids:
            return entry
        # No parent: nothing reads a list entry's parent (an edit walks up through containers only), and
        # a shared entry pointing at this version's list would keep its chunk directory alive later.
        copy = instances.entries[key] = _own_inner(entry, None)
        self.ids.add(id(copy))
        self.keep.append(copy)
        return copy


def copy_path(owned: _Owned, root: Inner, selector: Selector) -> None:
    """Copy every existing node along ``selector``'s path (what an edit of it can change)."""
    node: Any = root
    for step in selector.steps:
        if type(node) is not Inner:
            return
        child = owned.child(node, step.schema.name)
        if child is None or step.schema.kind in (LEAF, CONTAINER):
            node = child
            continue
        node = child if step.key is None else owned.entry(child, step.key)


def copy_for_merge(owned: _Owned, root: Inner, document: dict[str, Any]) -> None:
    """Copy every existing node a merged document reaches."""
    for schema, value in top_level(root.schema, document):
        _copy_along(owned, root, schema, value)


def _copy_along(owned: _Owned, parent: Inner, schema: SchemaNode, value: Any) -> None:
    if schema.kind == LEAF:
        return
    child = owned.child(parent, schema.name)
    if child is None:
        return
    if schema.kind == CONTAINER:
        if isinstance(value, dict):
            for name, member in value.items():
                member_schema = schema.children.get(name)
                if member_schema is not None:
                    _copy_along(owned, child, member_schema, member)
        return
    if not isinstance(value, list) or not schema.keys:
        return
    for item in value:
        if isinstance(item, dict):
            key: Any = tuple([item.get(k) for k in schema.keys])  # as the merge looks the entry up
            entry = owned.entry(child, key)
            if entry is not None:
                for name, member in item.items():
                    member_schema = schema.children.get(name)
                    if member_schema is not None and name not in schema.keys:
                        _copy_along(owned, entry, member_schema, member)


def ownership(root: Inner) -> _Owned:
    """What one commit on a forked ``root`` owns: the root, then each copy :func:`copy_path` makes."""
    return _Owned(root)
