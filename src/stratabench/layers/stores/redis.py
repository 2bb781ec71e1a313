"""Redis over TCP with redis-py: one string key per entry, under ``sb:{namespace}:``.

Needs the ``redis`` package (``stratabench[stores]``) and a Redis server:
``redis://[user:password@]host:port/db`` (``rediss://`` for TLS). Every key
this store writes starts with ``sb:{namespace}:``; :meth:`keys` and
:meth:`cleanup` find them with ``SCAN`` on that prefix and delete them with
``UNLINK``, never ``FLUSHDB``, so other data in the same database is safe.
Batches are ``MGET`` and ``MSET``, one round trip each.

Settings (``redis.*``: timeouts, retries): ``stratabench list settings``
shows them with their defaults; by default a failure is reported, not
hidden by a retry.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import SplitResult

from stratabench.errors import UsageError
from stratabench.layers.stores import STORES
from stratabench.layers.stores.base import Store, timeout_settings
from stratabench.settings import Setting

__all__ = ["RedisStore"]

_BATCH = 500


@STORES.register("redis", requires=("redis",), extra="stores")
class RedisStore(Store):
    """A Redis server; keys prefixed with the run's namespace."""

    schemes = ("redis", "rediss")
    service = "redis"
    settings = (*timeout_settings("redis"), Setting("redis.retries", "0", "retries of a failed command", "whole",
                                                              minimum=0, maximum=100))

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
        try:
            self._client: Any = redis.Redis.from_url(
                self._url,
                socket_connect_timeout=self.config.number("redis.connect_timeout"),
                socket_timeout=self.config.number("redis.socket_timeout"),
                retry=Retry(NoBackoff(), retries),
                retry_on_timeout=False,
            )
            self._client.ping()
        except (redis.RedisError, OSError, ValueError) as exc:
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
            self._client.set(self.prefix + key, value)

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
        if mapping:
            with self._guard("put_many"):
                self._client.mset(mapping)

    def cleanup(self) -> None:
        found = self._scan()
        with self._guard("cleanup"):
            for start in range(0, len(found), _BATCH):
                self._client.unlink(*found[start : start + _BATCH])

    def _close(self) -> None:
        self._client.close()
