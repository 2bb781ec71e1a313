"""Redis over TCP with redis-py: one string key per entry, under ``sb:{namespace}:``.

Needs the ``redis`` package (``stratabench[stores]``) and a Redis server:
``redis://[user:password@]host:port/db`` (``rediss://`` for TLS). Every key
this store writes starts with ``sb:{namespace}:``; :meth:`keys` and
:meth:`cleanup` find them with ``SCAN`` on that prefix and delete them with
``UNLINK``, never ``FLUSHDB``, so other data in the same database is safe.
Batches are ``MGET`` and pipelined ``SET``, one round trip each.

Every key is written with an expiry, ``redis.key_ttl`` seconds (a day by
default; 0 for none, and then batches are ``MSET``), so that a run killed
before its cleanup leaves nothing for long. ``stratabench clean`` finds
the namespaces of runs (:class:`~stratabench.layers.stores.base.Sweepable`)
by ``SCAN`` of ``sb:*`` and keeps only names of a run's shape.

Settings (``redis.*``: timeouts, retries, key expiry): ``stratabench list
settings`` shows them with their defaults; by default a failure is
reported, not hidden by a retry.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import SplitResult

from stratabench.errors import UsageError
from stratabench.layers.stores import STORES
from stratabench.errors import UsageError
from stratabench.layers.stores.base import Store, key_ttl_setting, timeout_settings
from stratabench.layers.stores.namespaces import RUN_NAMESPACE_PATTERN, TREESTORE_KEY_PATTERN, swept_name
from stratabench.settings import Setting

__all__ = ["RedisStore"]

_BATCH = 500


@STORES.register("redis", requires=("redis",), extra="stores")
class RedisStore(Store):
    """A Redis server; keys prefixed with the run's namespace."""

    schemes = ("redis", "rediss")
    service = "redis"
    default_port = 6379
    settings = (
        *timeout_settings("redis"),
        Setting("redis.retries", "0", "retries of a failed command", "whole", minimum=0, maximum=100),
        key_ttl_setting("redis"),
    )

    @classmethod
    def check_url(cls, parts: SplitResult) -> None:
        database = parts.path.strip("/")
        if database and not database.isdigit():
            raise UsageError(f"database {database!r} is not a number; Redis databases are numbered, "
                             "e.g. redis://127.0.0.1:6379/0")

    def _open(self) -> None:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        retries = self.config.whole("redis.retries")
        self._ttl = self.config.whole("redis.key_ttl")
        if self._ttl < 0:
            raise UsageError(f"redis.key_ttl={self._ttl}: must be 0 (no expiry) or more seconds")
        connect = self.config.number("redis.connect_timeout")
        try:
            # The first answer is awaited no longer than a connection: a TLS handshake (rediss://) with a
            # plain-text server never completes, and would otherwise wait out socket_timeout, retries and all.
            with redis.Redis.from_url(self._url, socket_connect_timeout=connect, socket_timeout=connect,
                                      retry=Retry(NoBackoff(), 0), retry_on_timeout=False) as probe:
                probe.ping()
            self._client: Any = redis.Redis.from_url(
                self._url,
                socket_connect_timeout=connect,
                socket_timeout=self.config.number("redis.socket_timeout"),
                retry=Retry(NoBackoff(), retries),
                retry_on_timeout=False,
            )
            self._client.ping()
        except (redis.RedisError, OSError, ValueError, TypeError) as exc:
            if self._parts.scheme == "rediss" and isinstance(exc, (redis.TimeoutError, TimeoutError)):
                raise self._unreachable(f"{self._reason(exc)} (no TLS handshake within {connect:g} s: rediss:// "
                                        "needs a server that speaks TLS; use redis:// for a plain-text one)") from exc
            raise self._unreachable(exc) from exc

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        import redis

        return (redis.RedisError, OSError)

    def get(self, key: bytes) -> bytes | None:
        with self._guard("get"):
            value: bytes | None = self._client.get(self.prefix + key)
        return value

    def put(self, key: bytes, value: bytes) -> None:
        with self._guard("put"):
            self._client.set(self.prefix + key, value, ex=self._ttl or None)

    def delete(self, key: bytes) -> None:
        with self._guard("delete"):
            self._client.unlink(self.prefix + key)

    def _scan(self) -> list[bytes]:
        with self._guard("keys"):
            return list(self._client.scan_iter(match=self.prefix + b"*", count=1000))

    def keys(self) -> Iterator[bytes]:
        start = len(self.prefix)
        return (key[start:] for key in self._scan())

    def get_many(self, keys: Sequence[bytes]) -> list[bytes | None]:
        if not keys:
            return []
        with self._guard("get_many"):
            values: list[bytes | None] = self._client.mget([self.prefix + key for key in keys])
        return values

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> None:
        mapping = {self.prefix + key: value for key, value in items}
        if not mapping:
            return
        with self._guard("put_many"):
            if not self._ttl:
                self._client.mset(mapping)
                return
            # MSET takes no expiry: pipelined SET EX, still one round trip.
            pipe = self._client.pipeline(transaction=False)
            for stored, value in mapping.items():
                pipe.set(stored, value, ex=self._ttl)
            pipe.execute()

    def _unlink_prefix(self, prefix: bytes) -> None:
        with self._guard("cleanup"):
            found = list(self._client.scan_iter(match=prefix + b"*", count=1000))
            for start in range(0, len(found), _BATCH):
                self._client.unlink(*found[start : start + _BATCH])

    def cleanup(self) -> None:
        self._unlink_prefix(self.prefix)

    def list_namespaces(self) -> list[str]:
        """The namespaces of runs (``20261121-054500-3f2a.matrix.…``) and the treestore study's key prefixes.

        The treestore datastore writes keys of its own, ``sbts:{namespace}:…``
        (:mod:`~stratabench.layers.stores.namespaces`); they are listed as
        ``sbts:{namespace}``.
        """
        names: set[str] = set()
        with self._guard("list namespaces"):
            for key in self._client.scan_iter(match=b"sb:*", count=1000):
                namespace, colon, _ = key[3:].partition(b":")
                name = namespace.decode("ascii", errors="replace")
                if colon and RUN_NAMESPACE_PATTERN.match(name):
                    names.add(name)
            for key in self._client.scan_iter(match=b"sbts:*", count=1000):
                prefix, colon, _ = key[5:].partition(b":")
                name = "sbts:" + prefix.decode("ascii", errors="replace")
                if colon and TREESTORE_KEY_PATTERN.match(name):
                    names.add(name)
        return sorted(names)

    def drop_namespace(self, name: str) -> None:
        if name.startswith("sbts:"):
            self._unlink_prefix(f"{swept_name(name, TREESTORE_KEY_PATTERN)}:".encode())
            return
        name = swept_name(name, RUN_NAMESPACE_PATTERN)
        self._unlink_prefix(f"sb:{name}:".encode())

    def _close(self) -> None:
        self._client.close()

