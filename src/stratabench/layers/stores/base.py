"""The store contract: bytes by key, inside a namespace of the run's own.

A store is opened from a URL with :func:`stratabench.layers.stores.open_store`; the URL's
scheme picks the plugin (``redis://`` → :mod:`.redis`). Every store keeps what it writes
inside its *namespace*, a name the caller derives from the run id:

- key/value servers (Redis, memcached) prefix every key with
  ``sb:{namespace}:``;
- SQL databases and SQLite use a table of their own, ``stratabench_{namespace}``;
- MongoDB uses a database of its own (or a collection of its own when the URL
  names a database);
- a directory of files uses a subdirectory, LMDB a named sub-database.

:meth:`Store.cleanup` removes that namespace and nothing else. No store ever
flushes a database or drops anything it did not name itself, so a URL that
points at a server holding someone else's data is safe to use.

How a run names its namespaces, and how ``stratabench clean`` recognises
them after a run killed before its cleanup, is :mod:`.namespaces`; clean
reaches them through the :class:`Sweepable` ability, and key/value servers
give every key an expiry (``redis.key_ttl``, ``memcached.key_ttl``: a day by
default).

The contract is small: ``get``, ``put``, ``delete``, ``keys`` and ``close``.
Optional abilities are separate protocols checked with ``isinstance``, as
go-ycsb separates ``DB`` from ``BatchDB``: :class:`BatchStore` for batched
get and put, :class:`ItemLimit` for stores that refuse large items,
:class:`DeferredUpkeep` for stores whose writes now and then run the
store's own upkeep (SQLite's WAL checkpoint) and can leave it to the caller,
:class:`Sweepable` for stores that can list and drop the namespaces runs
left behind. Callers that read or write many keys take :func:`batch_getter`
and :func:`batch_putter`: the batch where the store has one, key by key where
it has not, decided in this one place.

Failures are :class:`~stratabench.errors.StoreError` with one line naming the
server (URL redacted) and what to do; a value over the item limit is
:class:`~stratabench.errors.ValueTooLargeError`.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Protocol, runtime_checkable
from urllib.parse import SplitResult, unquote, urlsplit

from stratabench.errors import StoreError, StratabenchError, UsageError, ValueTooLargeError
from stratabench.layers.stores.namespaces import NAMESPACE_PATTERN, key_prefix
from stratabench.options import RunOptions
from stratabench.redact import MASK, password_cut_short, password_of, redact, scrub
from stratabench.settings import Setting, SettingReader

__all__ = [
    "TIMEOUT_RANGE",
    "StoreConnection",
    "BatchStore",
    "DeferredUpkeep",
    "upkeep_apart",
    "ItemLimit",
    "KeyValue",
    "Store",
    "batch_getter",
    "batch_putter",
    "Sweepable",
    "key_ttl_setting",
    "url_path",
    "parse_store_url",
    "timeout_settings",
]



@runtime_checkable
class BatchStore(Protocol):
    """A store that reads and writes many keys in one round trip."""

    def get_many(self, keys: Sequence[bytes]) -> list[bytes | None]:
        """Values of ``keys`` in the same order, ``None`` for a missing key."""

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> None:
        """Store every ``(key, value)`` pair, replacing existing values."""


class KeyValue(Protocol):
    """The least a caller of :func:`batch_getter` and :func:`batch_putter` needs: a store's get and put."""

    def get(self, key: bytes) -> bytes | None: ...

    def put(self, key: bytes, value: bytes) -> None: ...


def batch_getter(store: KeyValue) -> Callable[[Sequence[bytes]], list[bytes | None]]:
    """Read many keys: ``store.get_many`` on a :class:`BatchStore`, else one ``get`` per key.

    The one batch fallback. Resolved once, so a caller takes it outside any
    timed loop and the loop pays no ability check.
    """
    if isinstance(store, BatchStore):
        return store.get_many
    get = store.get

    def get_each(keys: Sequence[bytes]) -> list[bytes | None]:
        return [get(key) for key in keys]

    return get_each


def batch_putter(store: KeyValue) -> Callable[[Iterable[tuple[bytes, bytes]]], None]:
    """Write many pairs: ``store.put_many`` on a :class:`BatchStore`, else one ``put`` per pair."""
    if isinstance(store, BatchStore):
        return store.put_many
    put = store.put

    def put_each(items: Iterable[tuple[bytes, bytes]]) -> None:
        for key, value in items:
            put(key, value)

    return put_each


@runtime_checkable
class ItemLimit(Protocol):
    """A store that refuses values above a size, such as memcached's 1 MB."""

    @property
    def item_limit_bytes(self) -> int:
        """The largest value, in bytes, that one ``put`` accepts."""


@runtime_checkable
class DeferredUpkeep(Protocol):
    """A store whose writes now and then run its own upkeep inside one of them, and can leave it to the caller.

    SQLite in WAL mode copies its log back into the database file in the
    commit that takes the log past 1,000 pages (``wal_autocheckpoint``): one
    write of the cache study's article in every 59 to 91 took about 4 ms
    more, and whether a sample held it depended on the calibrated loop
    count (docs/studies/cache.md §4). A caller that times writes defers the
    upkeep and runs it between samples, untimed.
    """

    def defer_upkeep(self) -> Callable[[], None]:
        """Stop running the upkeep inside writes; the call returned runs it now, to be called between samples."""


def upkeep_apart(store: object) -> Callable[[], None] | None:
    """``store``'s upkeep taken out of its writes (:meth:`DeferredUpkeep.defer_upkeep`): the call that runs it
    between samples; ``None`` for a store with no such upkeep."""
    return store.defer_upkeep() if isinstance(store, DeferredUpkeep) else None


#: The range of a store's timeout settings, in seconds: a zero timeout would
#: make every call fail at once; an hour is beyond any cell.
TIMEOUT_RANGE = (0.001, 3600.0)


@runtime_checkable
class Sweepable(Protocol):
    """A store that finds the namespaces runs left in it, and drops them.

    Open it with ``open_store(url, namespace=SWEEP_NAMESPACE, sweeping=True)``
    (:mod:`.namespaces` holds the names and patterns):
    a store opened for sweeping creates nothing of its own. Names are what
    the store holds: key namespaces for key/value servers (matching
    :data:`RUN_NAMESPACE_PATTERN`), table, collection or database names for
    the others (matching :data:`RUN_IDENTIFIER_PATTERN`); Redis and MongoDB
    also hold the treestore study's keys and databases
    (:data:`TREESTORE_KEY_PATTERN`, :data:`TREESTORE_DATABASE_PATTERN`).
    """

    def list_namespaces(self) -> list[str]:
        """Every run namespace in the store, sorted; nothing that merely shares a prefix."""

    def drop_namespace(self, name: str) -> None:
        """Remove one name returned by :meth:`list_namespaces`, and nothing else."""


def key_ttl_setting(store: str, *, help_suffix: str = "") -> Setting:
    """``{store}.key_ttl``: seconds until a written key expires (a day; 0 never).

    Long enough for any cell, short enough that a run killed before its
    cleanup leaves nothing for long.
    """
    return Setting(f"{store}.key_ttl", "86400",
                   f"seconds until each key this tool writes expires, 0 for never{help_suffix}", "whole", minimum=0, maximum=30 * 86400)


def timeout_settings(store: str, *, socket: bool = True) -> tuple[Setting, ...]:
    """``{store}.connect_timeout`` (5 s) and, with ``socket``, ``{store}.socket_timeout`` (30 s).

    One declaration for every server store, so their timeouts mean the same.
    """
    low, high = TIMEOUT_RANGE
    connect = Setting(f"{store}.connect_timeout", "5", "seconds to wait for a connection", "number",
                      minimum=low, maximum=high)
    if not socket:
        return (connect,)
    return connect, Setting(f"{store}.socket_timeout", "30", "seconds to wait for an answer", "number",
                            minimum=low, maximum=high)


def parse_store_url(url: str) -> SplitResult:
    """Split a store URL, raising :class:`UsageError` when it is not one.

    A store URL has a scheme and ``://``: ``redis://127.0.0.1:6379/0``,
    ``sqlite:///tmp/bench.db``, ``memory://``.
    """
    secret = password_of(url)
    try:
        parts = urlsplit(url)
        if password_cut_short(url):
            # A raw '/', '?' or '#' in the password ended the host part early; its pieces would be read
            # as a port, a path or a database, and shown.
            raise ValueError("a password holds a character that ends the host part")
        parts.port  # noqa: B018 -- raises ValueError on a port that is not a number
    except ValueError as exc:
        # The parser quotes what it could not read, which may be a piece of a password cut at a raw '/'.
        reason = re.sub(r"'[^']*'", f"'{MASK}'", str(exc)) if secret else str(exc)
        raise UsageError(f"malformed store URL {redact(url)!r}: {scrub(reason, url)}; expected "
                         f"SCHEME://HOST:PORT/...{_ESCAPE_HINT if secret else ''}") from None
    if not parts.scheme or "://" not in url:
        raise UsageError(
            f"malformed store URL {redact(url)!r}: no scheme; "
            "expected for example memory://, sqlite:///path/bench.db or redis://127.0.0.1:6379/0"
        )
    return parts


#: Said of a malformed URL that carries a password: generated passwords often hold a character that ends it early.
_ESCAPE_HINT = ", with / ? # @ : in a password percent-encoded (%2F %3F %23 %40 %3A)"


def url_path(parts: SplitResult) -> str:
    """The file system path of a split URL such as ``sqlite:///tmp/b.db`` ('' if none).

    A user name or password (``sqlite://u:pw@/x.db``) is never part of it:
    :func:`open_store` refuses them for an embedded store, and a path is shown
    in messages.
    """
    host = parts.netloc.rpartition("@")[2]
    return unquote(("" if host in ("", "localhost") else host) + parts.path)


class StoreConnection:
    """The one error contract of everything that talks to a store: the URL kept private, one-line failures.

    :class:`Store` and the row tables (:mod:`stratabench.layers.stores.rows`)
    share it, so a failure reads the same whichever of them met it. A
    subclass sets ``_url``, ``_parts`` (:func:`parse_store_url`) and
    ``_closed``, and names its driver's errors in :meth:`_driver_errors`.
    """

    name: ClassVar[str]
    service: ClassVar[str | None] = None
    """The ``stratabench services`` name that starts such a server locally."""
    default_port: ClassVar[int | None] = None
    """The port the driver tries when the URL names none: messages name it, so that they say what was tried."""

    _url: str
    _parts: SplitResult
    _closed: bool

    @property
    def redacted_url(self) -> str:
        """The URL with its password masked: the only form ever shown."""
        return redact(self._url)

    @property
    def address(self) -> str:
        """``host:port`` of a server store, or the path of an embedded one.

        A server URL that names no host (``redis://``, libpq's socket form
        ``postgresql://u:pw@/db?host=/run/postgresql``) is shown whole,
        redacted, so the message still says what was tried.
        """
        parts = self._parts
        if parts.hostname:
            host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
            port = parts.port or self.default_port
            return f"{host}:{port}" if port else host
        if self.service:
            return f"{self.redacted_url} (no host in the URL: the driver's default)"
        return self.path or self.name

    @property
    def path(self) -> str:
        """The file system path of a URL such as ``sqlite:///tmp/b.db`` ('' if none)."""
        return url_path(self._parts)

    # -- failures ---------------------------------------------------------

    def _reason(self, exc: BaseException) -> str:
        """One line of ``exc`` with this store's credentials removed."""
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return scrub(text, self._url).rstrip(".")

    def _unreachable(self, exc: BaseException | str) -> StratabenchError:
        """The error for a server that cannot be reached or opened.

        A driver that cannot read the URL (an unknown query parameter, a bad
        value) raises ``ValueError`` or ``TypeError``: that is the URL to fix,
        not a server to start.
        """
        reason = exc if isinstance(exc, str) else self._reason(exc)
        if isinstance(exc, (ValueError, TypeError)):
            return UsageError(f"store URL {self.redacted_url!r} is not one {self.name} can use: {reason}; fix the URL")
        if self.service:
            todo = f"start one with `stratabench services up {self.service}` or pass a reachable --store URL"
        else:
            todo = "check the path and its permissions"
        return StoreError(f"cannot connect to {self.name} at {self.address}: {reason}; {todo}")

    def _failed(self, operation: str, exc: BaseException | str) -> StoreError:
        """The error for an operation that failed on an open store."""
        reason = exc if isinstance(exc, str) else self._reason(exc)
        todo = (
            "check that the server is still running (`stratabench services status`)"
            if self.service
            else "check the disk and the path's permissions"
        )
        return StoreError(f"{self.name} at {self.address} failed during {operation}: {reason}; {todo}")

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        """Exception classes of the driver that mean the store failed."""
        return (OSError,)

    @contextmanager
    def _guard(self, operation: str) -> Iterator[None]:
        """Turn the driver's exceptions inside the block into :class:`StoreError`."""
        if self._closed:
            raise StoreError(f"{self.name} at {self.address}: {operation} on a closed store; open it again")
        try:
            yield
        except StratabenchError:
            raise
        except self._driver_errors() as exc:
            raise self._failed(operation, exc) from exc


class Store(StoreConnection, ABC):
    """Bytes by key, inside a namespace of its own.

    Parameters
    ----------
    url
        Where the store lives. Kept private: only :attr:`redacted_url` is
        ever shown.
    namespace
        The run's own namespace (see the module docstring); letters,
        digits, ``_``, ``.`` and ``-``.
    options
        Run options, for the store's :attr:`settings` (``redis.socket_timeout``).
    server_pids
        Process ids of the local server behind the URL, when known, for
        the engine's ``server_cpu_ns``.
    sweeping
        Opened only to list and drop run namespaces (:class:`Sweepable`):
        the store creates no table or file of its own.

    Notes
    -----
    Keys are arbitrary bytes, the empty key included; stores that need
    text encode them. Values are bytes, the empty value included.
    """

    name: ClassVar[str]
    """The registered name (set by the registry)."""

    schemes: ClassVar[tuple[str, ...]] = ()
    """URL schemes this store opens."""

    settings: ClassVar[tuple[Setting, ...]] = ()
    """Every ``--set`` setting the store reads, each with its default (read them with :attr:`config`)."""

    @classmethod
    def check_url(cls, parts: SplitResult) -> None:
        """Refuse, with a one-line :class:`UsageError`, a URL this store would misread; the default accepts any.

        Called by :func:`check_store_url` before anything runs, and by
        :func:`open_store`. It never connects.
        """

    @classmethod
    def scratch_url(cls, directory: Path) -> str | None:
        """The URL of a throwaway instance of this store, keeping its files in ``directory``.

        An embedded store names a place under ``directory`` (which exists and
        is empty); a server store returns ``None``: its :attr:`service` starts
        a private server instead. The contract tests reach every registered
        store this way, so a new store is tested the moment it is registered.
        """
        return None
    unswept_note: ClassVar[str] = "it cannot list what runs left in it"
    """For a store that is not :class:`Sweepable`: why, and what happens to a killed run's data instead."""

    def __init__(
        self,
        url: str,
        *,
        namespace: str,
        options: RunOptions | None = None,
        server_pids: tuple[int, ...] = (),
        sweeping: bool = False,
    ) -> None:
        if not NAMESPACE_PATTERN.match(namespace):
            raise UsageError(
                f"store namespace {namespace!r} is not valid; use 1-100 letters, digits, '_', '.' or '-'"
            )
        self._url = url
        self._parts = parse_store_url(url)
        self.namespace = namespace
        self.options = options if options is not None else RunOptions()
        self._server_pids = tuple(server_pids)
        self._closed = False
        self.sweeping = sweeping
        try:
            self._open()
        except BaseException:
            # A half-opened client (pymongo's, redis-py's) must not outlive the error.
            try:
                self._close()
            except Exception:  # noqa: BLE001 -- the open error is the one to report
                pass
            raise

    def _open(self) -> None:
        """Connect or open files; called once at the end of ``__init__``.

        Raise :meth:`_unreachable` errors here, so a store that cannot be
        reached fails when it is opened, not at its first operation.
        """

    # -- the contract -----------------------------------------------------

    @abstractmethod
    def get(self, key: bytes) -> bytes | None:
        """The value stored under ``key``, or ``None`` when there is none."""

    @abstractmethod
    def put(self, key: bytes, value: bytes) -> None:
        """Store ``value`` under ``key``, replacing any value there."""

    @abstractmethod
    def delete(self, key: bytes) -> None:
        """Remove ``key``; removing a missing key is not an error."""

    @abstractmethod
    def keys(self) -> Iterator[bytes]:
        """Every key of this namespace, in no particular order."""

    @abstractmethod
    def _close(self) -> None:
        """Release connections and handles (called once by :meth:`close`)."""

    def cleanup(self) -> None:
        """Delete everything of this namespace, and only that.

        The default deletes key by key; stores with a table, database or
        directory of their own drop it instead. After a cleanup the store
        is only to be closed.
        """
        for key in list(self.keys()):
            self.delete(key)

    def close(self) -> None:
        """Release connections and handles. Idempotent; does not clean up."""
        if not self._closed:
            self._closed = True
            self._close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- what it is -------------------------------------------------------

    @property
    def server_pids(self) -> tuple[int, ...]:
        """Process ids of the local server (empty when not known)."""
        return self._server_pids

    @property
    def prefix(self) -> bytes:
        """``sb:{namespace}:``, the key prefix of key/value servers."""
        return key_prefix(self.namespace)

    @property
    def config(self) -> SettingReader:
        """The run's values of this store's declared :attr:`settings`."""
        return SettingReader(type(self), self.options)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.redacted_url} namespace={self.namespace!r}>"

    __str__ = __repr__
    # -- failures ---------------------------------------------------------

    def _too_large(self, size: int, limit: int, how: str) -> ValueTooLargeError:
        return ValueTooLargeError(
            f"value of {size} bytes exceeds {self.name}'s item limit of {limit} bytes at {self.address}; {how}"
        )
