"""The core every operation goes through (docs/studies/treestore.md §4): reads, commits, operational data, cache, events.

One :class:`Core` per backend and process holds the module's version
counter, its write lock and the subscriptions. A :class:`Connection` owns
the backend's client state and, when opened with ``cache=True``, the
running cache (§4.5). A :class:`Session` works on one datastore, collects
edits and commits them:

- running (§4.2): load (or copy the current cache), apply, diff; stop if
  the diff is empty; validate the whole tree, check write access, publish
  ``change``, store (prepare, commit), bump the version, refresh the cache,
  publish ``done``;
- operational (§4.3): the session's push tree (its own cache, else loaded
  under its owner key), edits applied to a copy, the old and new
  operational views compared for the notification, the store diff written
  under the owner key. No validation.

Reads (§4.1, §4.4) check read access first on every call, cached or not.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from stratabench.errors import StratabenchError
from stratabench.systems.treestore.backends.base import OPERATIONAL, RUNNING, Access, Owner, TreeBackend
from stratabench.systems.treestore.cores import DEFAULT_CORE, commit_core
from stratabench.systems.treestore.diff import Diff, apply_delete, apply_merge, apply_set, compare
from stratabench.systems.treestore import json_codec
from stratabench.systems.treestore.paths import Selector, parse, result_tree, select
from stratabench.systems.treestore.records import load_scopes
from stratabench.systems.treestore.schema import PERF, SchemaNode
from stratabench.systems.treestore.subscriptions import ChangeHandler, Handler, ProviderHandler, publish
from stratabench.systems.treestore.tree import Inner, Key, Value, copy_tree, from_document, merge_into

__all__ = ["DEFAULT_TIMEOUT", "AccessDenied", "Connection", "Core", "ItemError", "Session", "installed", "stored_tree"]

DEFAULT_TIMEOUT = 5.0
"""Seconds a single-item commit waits for its subscribers (sysrepo's default)."""


class AccessDenied(StratabenchError):
    """The backend's permission record refuses the operation."""


class ItemError(StratabenchError):
    """``get_item`` matched no node, several nodes, or a node that is not a leaf."""


@lru_cache(maxsize=256)
def _parse(module: SchemaNode, text: str) -> Selector:
    return parse(module, text)


class Core:
    """The module's shared state in this process: version counter, lock, subscriptions, push owners.

    ``core`` names how commits copy and validate (:mod:`.cores`): ``sysrepo``
    (the study's) or ``incremental``.
    """

    def __init__(self, backend: TreeBackend, module: SchemaNode = PERF, core: str = DEFAULT_CORE) -> None:
        self.backend = backend
        self.module = module
        self.commits = commit_core(core)
        self.version = 0
        self.lock = threading.Lock()
        self.change_handlers: dict[str, list[ChangeHandler]] = {RUNNING: [], OPERATIONAL: []}
        self.providers: list[ProviderHandler] = []
        self.pushing: dict[Owner, Session] = {}
        self.connections: list[Connection] = []
        self._ids = itertools.count(1)
        self._admin = backend.connect()

    def next_id(self) -> int:
        return next(self._ids)

    def install(self, access: Access | None = None) -> None:
        """Install the module on running and operational (removing earlier data of this namespace first)."""
        granted = access or Access.current_user()
        for ds in (RUNNING, OPERATIONAL):
            self.backend.uninstall(self.module, ds)
            self.backend.install(self.module, ds, granted)

    def uninstall(self) -> None:
        for ds in (RUNNING, OPERATIONAL):
            self.backend.uninstall(self.module, ds)

    def close(self) -> None:
        """Close every connection still open (their sessions end), stop the handlers, disconnect."""
        for conn in list(self.connections):
            conn.close()
        for handlers in self.change_handlers.values():
            for handler in handlers:
                handler.stop()
        for provider in self.providers:
            provider.stop()
        self.backend.disconnect(self._admin)

    def connect(self, *, cache: bool = False) -> Connection:
        return Connection(self, cache)


class Connection:
    """A client's handle: backend client state and, optionally, the running cache."""

    def __init__(self, core: Core, cache: bool) -> None:
        self.core = core
        self.id = core.next_id()
        self.client = core.backend.connect()
        self.caching = cache
        self.cached: tuple[int, Inner | None] | None = None
        self.sessions: list[Session] = []
        core.connections.append(self)

    def session(self, ds: str = RUNNING) -> Session:
        session = Session(self, ds)
        self.sessions.append(session)
        return session

    def running_tree(self, scopes_of: list[Selector] | None = None) -> Inner | None:
        """The running tree for a read: the current cache in place, else a (partial) load."""
        core = self.core
        if self.caching:
            if self.cached is not None and self.cached[0] == core.version:
                return self.cached[1]
            tree = core.backend.load(self.client, core.module, RUNNING, None, None)
            self.cached = (core.version, tree)
            return tree
        scopes = load_scopes(scopes_of) if scopes_of is not None else None
        return core.backend.load(self.client, core.module, RUNNING, None, scopes)

    def close(self) -> None:
        if self not in self.core.connections:
            return
        self.core.connections.remove(self)
        try:
            for session in list(self.sessions):
                session.stop()
        finally:
            self.core.backend.disconnect(self.client)


class Session:
    """Edits on one datastore, committed together; on operational, the owner of its push data."""

    def __init__(self, conn: Connection, ds: str) -> None:
        if ds not in (RUNNING, OPERATIONAL):
            raise StratabenchError(f"unknown datastore {ds!r}; use {RUNNING} or {OPERATIONAL}")
        self.conn = conn
        self.core = conn.core
        self.ds = ds
        self.id = conn.core.next_id()
        self.origin = "unknown"
        self.edits: list[tuple[Any, ...]] = []
        self.push_cache: tuple[Inner | None] | None = None
        self._subscriptions: list[Handler] = []

    @property
    def owner(self) -> Owner:
        return (self.conn.id, self.id)

    # -- edits ---------------------------------------------------------------

    def set(self, path: str, value: Value | None = None, *, strict: bool = False,
            after: Key | None | bool = True) -> None:
        """``set`` (or ``set!`` with ``strict``): collected until :meth:`commit`."""
        self.edits.append(("set", _parse(self.core.module, path), value, strict, after))

    def delete(self, path: str) -> None:
        self.edits.append(("delete", _parse(self.core.module, path)))

    def merge(self, document: dict[str, Any]) -> None:
        """A batch edit: merge a canonical document."""
        self.edits.append(("merge", document))

    def discard(self) -> None:
        self.edits.clear()

    def _apply(self, tree: Inner) -> Diff:
        diff = Diff(self.core.module)
        for edit in self.edits:
            if edit[0] == "set":
                apply_set(tree, edit[1], edit[2], diff, strict=edit[3], after=edit[4])
            elif edit[0] == "delete":
                apply_delete(tree, edit[1], diff)
            else:
                apply_merge(tree, edit[1], diff)
        return diff

    # -- commit --------------------------------------------------------------

    def commit(self, timeout: float = DEFAULT_TIMEOUT) -> bool:
        """Apply the collected edits; return whether anything changed. Edits are cleared either way."""
        try:
            with self.core.lock:
                if self.ds == RUNNING:
                    return self._commit_running(timeout)
                return self._commit_operational(timeout)
        finally:
            self.edits.clear()

    def _commit_running(self, timeout: float) -> bool:
        core, conn, backend, module = self.core, self.conn, self.core.backend, self.core.module
        current = conn.caching and conn.cached is not None and conn.cached[0] == core.version
        if current:
            assert conn.cached is not None
            work = core.commits.working_copy(conn.cached[1], self.edits)
        else:
            work = backend.load(conn.client, module, RUNNING, None, None)
        if work is None:
            work = Inner(module, None)
        diff = self._apply(work)
        stored: Inner | None = work if work.children else None
        if not diff:
            if conn.caching and not current:
                conn.cached = (core.version, stored)
            return False
        core.commits.check(work, diff)
        if not backend.access(conn.client, module, RUNNING)[1]:
            raise AccessDenied(f"no write permission on {module.name} running")
        handlers = core.change_handlers[RUNNING]
        payload = self._notify(handlers, "change", diff, timeout)
        backend.store_prepare(conn.client, module, RUNNING, None, diff, stored, None)
        backend.store_commit(conn.client, module, RUNNING, None, diff, stored, None)
        core.version += 1
        if conn.caching:
            conn.cached = (core.version, stored)
        if payload is not None:
            publish(list(handlers), payload.replace(b'"change"', b'"done"', 1), timeout)
        return True

    @staticmethod
    def _notify(handlers: list[ChangeHandler], event: str, diff: Diff, timeout: float) -> bytes | None:
        if not handlers:
            return None
        payload = json_codec.dumps({"event": event, "diff": diff.document()})
        publish(list(handlers), payload, timeout)
        return payload

    def _push_tree(self) -> Inner | None:
        if self.push_cache is not None:
            return self.push_cache[0]
        core = self.core
        return core.backend.load(self.conn.client, core.module, OPERATIONAL, self.owner, None)

    def _view(self, running: Inner | None, own: Inner | None, *, replace_own: bool = True) -> Inner:
        """Running merged with every session's push data; with ``replace_own``, this session's is ``own``."""
        view = copy_tree(running) or Inner(self.core.module, None)
        for owner, session in self.core.pushing.items():
            if owner != self.owner or not replace_own:
                other = session._push_tree()
                if other is not None:
                    merge_into(view, other)
        if own is not None:
            merge_into(view, own)
        return view

    def _commit_operational(self, timeout: float) -> bool:
        core, conn, backend, module = self.core, self.conn, self.core.backend, self.core.module
        old = self._push_tree()
        new = core.commits.working_copy(old, self.edits) or Inner(module, None)
        store_diff = self._apply(new)
        if not store_diff:
            self.push_cache = (old,)
            return False
        pushed: Inner | None = new if new.children else None
        running = conn.running_tree()
        notification = compare(module, self._view(running, old), self._view(running, pushed))
        handlers = core.change_handlers[OPERATIONAL]
        payload = self._notify(handlers, "change", notification, timeout) if notification else None
        backend.store_prepare(conn.client, module, OPERATIONAL, self.owner, store_diff, pushed, self.origin)
        backend.store_commit(conn.client, module, OPERATIONAL, self.owner, store_diff, pushed, self.origin)
        self.push_cache = (pushed,)
        if pushed is None:
            core.pushing.pop(self.owner, None)
        else:
            core.pushing[self.owner] = self
        if payload is not None:
            publish(list(handlers), payload.replace(b'"change"', b'"done"', 1), timeout)
        return True

    # -- reads ---------------------------------------------------------------

    def _check_read(self) -> None:
        core = self.core
        if not core.backend.access(self.conn.client, core.module, self.ds)[0]:
            raise AccessDenied(f"no read permission on {core.module.name} {self.ds}")

    def _tree_for(self, selector: Selector) -> Inner | None:
        if self.ds == RUNNING:
            return self.conn.running_tree([selector])
        core = self.core
        view = self._view(self.conn.running_tree(), None, replace_own=False)
        request = json_codec.dumps({"path": selector.text})
        covering = [p for p in core.providers if p.path.startswith(selector.text) or selector.text.startswith(p.path)]
        for answer in publish(list(covering), request, DEFAULT_TIMEOUT) if covering else []:
            provided = from_document(core.module, json_codec.loads(answer or b"{}"))
            if provided is not None:
                merge_into(view, provided)
        return view

    def get_data(self, path: str) -> Inner | None:
        """A new tree of the selected nodes with their ancestors and keys (``None`` if nothing matches)."""
        self._check_read()
        selector = _parse(self.core.module, path)
        return result_tree(self.core.module, select(self._tree_for(selector), selector))

    def get_item(self, path: str) -> Value:
        """Exactly one leaf's value."""
        self._check_read()
        selector = _parse(self.core.module, path)
        matches = select(self._tree_for(selector), selector)
        if len(matches) != 1 or isinstance(matches[0][1], (Inner,)) or not isinstance(matches[0][1], (int, str)):
            raise ItemError(f"get_item {path!r}: {len(matches)} nodes match; expected exactly one leaf")
        value: Value = matches[0][1]
        return value

    # -- subscriptions ---------------------------------------------------------

    def subscribe(self, callback: Callable[[str, dict[str, Any]], None]) -> ChangeHandler:
        """A change subscription on this session's datastore, served by its own thread."""
        handler = ChangeHandler(callback)
        self.core.change_handlers[self.ds].append(handler)
        self._subscriptions.append(handler)
        return handler

    def provide(self, path: str, provider: Callable[[str], dict[str, Any]]) -> ProviderHandler:
        """An operational provider for ``path``: ``provider(request_path)`` returns a canonical document."""
        handler = ProviderHandler(_parse(self.core.module, path).text, provider)
        self.core.providers.append(handler)
        self._subscriptions.append(handler)
        return handler

    def unsubscribe(self, handler: Handler) -> None:
        core = self.core
        for handlers in (core.change_handlers[RUNNING], core.change_handlers[OPERATIONAL], core.providers):
            if handler in handlers:
                handlers.remove(handler)  # type: ignore[arg-type]
        if handler in self._subscriptions:
            self._subscriptions.remove(handler)
        handler.stop()

    def stop(self) -> None:
        """End the session: unsubscribe, and discard its push data (as sysrepo does)."""
        for handler in list(self._subscriptions):
            self.unsubscribe(handler)
        if self.ds == OPERATIONAL and (self.owner in self.core.pushing or self.push_cache is None):
            core = self.core
            with core.lock:
                if self._push_tree() is not None:
                    core.backend.store_prepare(self.conn.client, core.module, OPERATIONAL, self.owner, None, None, None)
                    core.backend.store_commit(self.conn.client, core.module, OPERATIONAL, self.owner, None, None, None)
                core.pushing.pop(self.owner, None)
                self.push_cache = (None,)
        if self in self.conn.sessions:
            self.conn.sessions.remove(self)


def stored_tree(core: Core, ds: str = RUNNING, owner: Owner | None = None) -> Inner | None:
    """What the backend holds, loaded whole with no cache (the harness's integrity check, untimed)."""
    return core.backend.load(core._admin, core.module, ds, owner, None)


@contextmanager
def installed(backend: TreeBackend, module: SchemaNode = PERF, core_name: str = DEFAULT_CORE) -> Iterator[Core]:
    """A core on ``backend`` with the module installed; at the end it is closed and the namespace removed."""
    core = Core(backend, module, core_name)
    try:
        core.install()
        yield core
    finally:
        core.close()
        backend.cleanup()
