"""memcached over TCP with pymemcache: one item per entry, under ``sb:{namespace}:``.

Needs the ``pymemcache`` package (``stratabench[stores]``) and a memcached
server: ``memcached://host:port``. memcached keys are text of at most 250
bytes without spaces, so a key is stored as ``sb:{namespace}:`` + its
URL-safe base64 (binary keys work; keys up to about 100 bytes).

memcached refuses items over its ``item_size_max`` (1 MB by default, ``-I``
to change). The store reads the limit from the server's ``stats settings``
and raises :class:`~stratabench.errors.ValueTooLargeError` before sending a
larger value. memcached cannot list keys, except through
``lru_crawler metadump`` (1.4.31+), which :meth:`keys` uses. A metadump is
a live walk, not a snapshot: an item the LRU maintainer moves between its
hot, warm and cold segments during the walk can be missed. So keys this
store wrote are also remembered: :meth:`keys` adds those still on the
server, and :meth:`cleanup` deletes them even where metadump is off. It
never calls ``flush_all``. Items may be evicted at any time: a cache, not a
database.

``stratabench clean`` cannot sweep memcached: without metadump it cannot
list keys at all, and a full crawl of a shared cache is no cleanup tool.
Every item is written with an expiry instead, ``memcached.key_ttl`` seconds
(a day by default, at most 30 days: memcached reads more as a date), so a
run killed before its cleanup leaves nothing for long.

A URL with a user and password (``memcached://user:pass@host:port``, as the
private server of ``stratabench services`` has) authenticates every
connection with memcached's ASCII-protocol authentication (``-Y``) before
its first command; pymemcache has no authentication of its own, so
:func:`memcached_client` adds it when pymemcache connects.

Settings (``memcached.*``: timeouts, key expiry): ``stratabench list
settings`` shows them with their defaults.
"""

from __future__ import annotations

import base64
import socket
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import SplitResult, unquote

from stratabench.errors import StoreError, UsageError
from stratabench.layers.stores import STORES
from stratabench.layers.stores.base import Store, key_ttl_setting, parse_store_url, timeout_settings
from stratabench.services.memcached import auth_command

__all__ = ["MemcachedStore", "memcached_client"]

_MAX_KEY = 250
# Bytes an item takes besides its key and value (header, CAS, flags, suffix);
# memcached 1.6 reports size=70 for a 10-byte key and 3-byte value.
_ITEM_OVERHEAD = 64
_DEFAULT_ITEM_SIZE_MAX = 1024 * 1024
# memcached takes an exptime above 30 days as a Unix time, not a duration.
_MAX_RELATIVE_TTL = 30 * 24 * 3600
# Keys per multi-key command, so that one command line stays well within memcached's limits.
_BATCH = 500


def _authentication(parts: SplitResult) -> bytes:
    """What a connection sends first: the ASCII authentication when the URL has a password, else nothing."""
    if parts.password is None:
        return b""
    return auth_command(unquote(parts.username or ""), unquote(parts.password))


def _authenticate(sock: socket.socket, command: bytes) -> None:
    """Send ``command`` (from :func:`_authentication`; nothing if empty) and read its ``STORED``."""
    from pymemcache.exceptions import MemcacheClientError

    if not command:
        return
    sock.sendall(command)
    answer = b""
    while not answer.endswith(b"\r\n") and len(answer) < 256:
        chunk = sock.recv(256 - len(answer))
        if not chunk:
            break
        answer += chunk
    if answer != b"STORED\r\n":
        raise MemcacheClientError(f"authentication refused ({answer.decode(errors='replace').strip()})")


def memcached_client(url: str, **options: Any) -> Any:
    """A pymemcache ``Client`` for ``url`` that authenticates each connection when the URL has a password.

    ``options`` go to ``pymemcache.client.base.Client``. A wrong password
    raises ``MemcacheClientError`` at the first command.
    """
    from pymemcache.client.base import Client
    from pymemcache.exceptions import MemcacheClientError

    parts = parse_store_url(url)
    server = (parts.hostname or "127.0.0.1", parts.port or 11211)
    command = _authentication(parts)
    if not command:
        return Client(server, **options)

    class AuthenticatingClient(Client):  # type: ignore[misc]  # pymemcache is untyped
        # pymemcache reconnects by itself after an error: each new socket authenticates first.
        def _connect(self) -> None:
            super()._connect()
            try:
                _authenticate(self.sock, command)
            except (MemcacheClientError, OSError):
                self.close()
                raise

    return AuthenticatingClient(server, **options)


@STORES.register("memcached", requires=("pymemcache",), extra="stores")
class MemcachedStore(Store):
    """A memcached server; keys prefixed with the run's namespace, 1 MB item limit."""

    schemes = ("memcached", "memcache")
    service = "memcached"
    default_port = 11211
    settings = (*timeout_settings("memcached"), key_ttl_setting("memcached", help_suffix=" (at most 2592000)"))
    unswept_note = (
        "memcached cannot list its keys; the items of a killed run expire by themselves "
        "after memcached.key_ttl seconds (a day by default)"
    )

    def _open(self) -> None:
        from pymemcache.exceptions import MemcacheError

        self._timeout = self.config.number("memcached.socket_timeout")
        self._connect_timeout = self.config.number("memcached.connect_timeout")
        self._written: set[bytes] = set()
        self._ttl = self.config.whole("memcached.key_ttl")
        if not 0 <= self._ttl <= _MAX_RELATIVE_TTL:
            raise UsageError(
                f"memcached.key_ttl={self._ttl}: give 0 (no expiry) to {_MAX_RELATIVE_TTL} seconds (30 days)"
            )
        self._client: Any = memcached_client(
            self._url,
            connect_timeout=self._connect_timeout,
            timeout=self._timeout,
            no_delay=True,
            default_noreply=False,
        )
        try:
            settings = self._client.stats("settings")
        except (MemcacheError, OSError) as exc:
            raise self._unreachable(exc) from exc
        raw = settings.get(b"item_size_max", settings.get("item_size_max", _DEFAULT_ITEM_SIZE_MAX))
        self._item_size_max = int(raw)

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        from pymemcache.exceptions import MemcacheError

        return (MemcacheError, OSError)

    @property
    def item_limit_bytes(self) -> int:
        """The largest value a ``put`` accepts for the longest allowed key."""
        return self._item_size_max - _ITEM_OVERHEAD - _MAX_KEY

    def _key(self, key: bytes) -> bytes:
        stored = self.prefix + base64.urlsafe_b64encode(key).rstrip(b"=")
        if len(stored) > _MAX_KEY:
            raise UsageError(f"key of {len(key)} bytes is too long for memcached once encoded ({_MAX_KEY} at most)")
        return stored

    def _key_of(self, stored: bytes) -> bytes | None:
        if not stored.startswith(self.prefix):
            return None
        encoded = stored[len(self.prefix) :]
        try:
            return base64.urlsafe_b64decode(encoded + b"=" * (-len(encoded) % 4))
        except ValueError:
            return None

    def _check_size(self, stored: bytes, value: bytes) -> None:
        limit = self._item_size_max - _ITEM_OVERHEAD - len(stored)
        if len(value) > limit:
            raise self._too_large(
                len(value), limit, f"memcached's item_size_max is {self._item_size_max}; start it with a larger -I"
            )

    def _too_large_reply(self, exc: BaseException, size: int) -> StoreError | None:
        if "too large" in str(exc).lower():
            return self._too_large(size, self._item_size_max, "the server refused the item (item_size_max)")
        return None

    def get(self, key: bytes) -> bytes | None:
        stored = self._key(key)
        with self._guard("get"):
            value: bytes | None = self._client.get(stored)
        return value

    def put(self, key: bytes, value: bytes) -> None:
        stored = self._key(key)
        self._check_size(stored, value)
        self._written.add(key)
        with self._guard("put"):
            try:
                ok = self._client.set(stored, value, expire=self._ttl, noreply=False)
            except self._driver_errors() as exc:
                raise self._too_large_reply(exc, len(value)) or self._failed("put", exc) from exc
        if not ok:
            raise self._failed("put", "the server did not store the item")

    def delete(self, key: bytes) -> None:
        stored = self._key(key)
        with self._guard("delete"):
            self._client.delete(stored, noreply=False)
        self._written.discard(key)

    def get_many(self, keys: Sequence[bytes]) -> list[bytes | None]:
        stored = [self._key(key) for key in keys]
        if not stored:
            return []
        with self._guard("get_many"):
            found: dict[bytes, bytes] = self._client.get_many(stored)
        return [found.get(key) for key in stored]

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> None:
        mapping: dict[bytes, bytes] = {}
        for key, value in items:
            stored = self._key(key)
            self._check_size(stored, value)
            mapping[stored] = value
            self._written.add(key)
        if not mapping:
            return
        with self._guard("put_many"):
            failed = self._client.set_many(mapping, expire=self._ttl, noreply=False)
        if failed:
            raise self._failed("put_many", f"the server did not store {len(failed)} of {len(mapping)} items")

    def _metadump(self) -> list[bytes] | None:
        """Every key on the server from ``lru_crawler metadump all``, or ``None`` if refused."""
        host = self._parts.hostname or "127.0.0.1"
        port = self._parts.port or 11211
        for _ in range(20):
            with socket.create_connection((host, port), timeout=self._timeout) as sock:
                _authenticate(sock, _authentication(self._parts))
                sock.sendall(b"lru_crawler metadump all\r\n")
                data = _read_dump(sock)
            if data.startswith(b"BUSY"):
                time.sleep(0.05)  # another crawl is running; wait for it
                continue
            if not data.endswith(b"END\r\n"):
                return None
            return [
                unquote(line[4:].split(b" ", 1)[0].decode()).encode()
                for line in data.splitlines()
                if line.startswith(b"key=")
            ]
        return None

    def _dumped_keys(self) -> set[bytes]:
        """The namespace's keys a metadump walk saw (none where metadump is off)."""
        with self._guard("keys"):
            dumped = self._metadump()
        return {key for key in map(self._key_of, dumped or ()) if key is not None}

    def keys(self) -> Iterator[bytes]:
        found = self._dumped_keys()
        # Without metadump only ours can be listed, and a walk can miss an item moved between
        # LRU segments while it ran: the keys this store wrote are checked directly.
        unseen = sorted(self._written - found)
        for start in range(0, len(unseen), _BATCH):
            batch = unseen[start : start + _BATCH]
            found.update(key for key, value in zip(batch, self.get_many(batch)) if value is not None)
        return iter(found)

    def cleanup(self) -> None:
        # Every key written is deleted, present or not: no need to check which are.
        stored = [self._key(key) for key in self._dumped_keys() | self._written]
        with self._guard("cleanup"):
            for start in range(0, len(stored), _BATCH):
                self._client.delete_many(stored[start : start + _BATCH], noreply=False)
        self._written.clear()

    def _close(self) -> None:
        self._client.close()


def _read_dump(sock: socket.socket) -> bytes:
    """A metadump reply: key lines then ``END``, or one error line (``BUSY``, ``ERROR``)."""
    data = b""
    while True:
        chunk = sock.recv(1 << 16)
        if not chunk:
            return data
        data += chunk
        if data.endswith(b"END\r\n") or (not data.startswith(b"key=") and data.endswith(b"\r\n")):
            return data
