"""PostgreSQL with psycopg 3: a key/value table of the run's own.

Needs the ``psycopg`` package (``stratabench[stores]``) and a PostgreSQL
server: ``postgresql://user:password@host:port/database`` (``postgres://``
too; libpq's query parameters such as ``sslmode`` pass through). This
namespace lives in the table ``stratabench_{namespace}`` (``k bytea``
primary key, ``v bytea``) in the URL's database and default schema;
:meth:`cleanup` drops that table and nothing else. ``stratabench clean``
finds the tables of runs in the default schema by the shape of their names
(:class:`~stratabench.layers.stores.base.Sweepable`). Each ``put`` is one
autocommitted upsert; ``put_many`` is one transaction of pipelined upserts;
``get_many`` is one ``= ANY(...)`` query.

When the server is a local one whose process ids are known, the store adds
the pid of its own backend process, which does the work of its queries,
so ``server_cpu_ns`` counts it.

Settings (``postgresql.connect_timeout``; libpq takes whole seconds, at
least 2): ``stratabench list settings`` shows its default.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from stratabench.layers.stores import STORES
from stratabench.layers.stores.base import Store, timeout_settings
from stratabench.layers.stores.namespaces import RUN_IDENTIFIER_PATTERN, namespace_identifier, swept_name
from stratabench.settings import SettingReader

__all__ = ["PostgresqlStore"]


def connect(url: str, config: SettingReader) -> Any:
    """Open an autocommit psycopg connection with the ``postgresql.*`` settings.

    Shared with the cache suite's row tables, so both open the database alike.
    """
    import psycopg

    # libpq counts connect_timeout in whole seconds and treats 1 as 2 anyway.
    timeout = max(2, round(config.number("postgresql.connect_timeout")))
    return psycopg.connect(url, autocommit=True, connect_timeout=timeout)


@STORES.register("postgresql", requires=("psycopg",), extra="stores")
class PostgresqlStore(Store):
    """A PostgreSQL table of the run's own."""

    schemes = ("postgresql", "postgres")
    service = "postgresql"
    default_port = 5432
    settings = timeout_settings("postgresql", socket=False)

    def _open(self) -> None:
        import psycopg

        self._table = namespace_identifier(self.namespace)
        try:
            self._db: Any = connect(self._url, self.config)
            if not self.sweeping:
                self._db.execute(
                    f'CREATE TABLE IF NOT EXISTS "{self._table}" (k bytea PRIMARY KEY, v bytea NOT NULL)'
                )
            if self._server_pids:
                self._server_pids = (*self._server_pids, int(self._db.info.backend_pid))
        except (psycopg.Error, OSError) as exc:
            raise self._unreachable(exc) from exc
        self._upsert = (
            f'INSERT INTO "{self._table}" (k, v) VALUES (%s, %s) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v'
        )

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        import psycopg

        return (psycopg.Error, OSError)

    def get(self, key: bytes) -> bytes | None:
        with self._guard("get"):
            row = self._db.execute(f'SELECT v FROM "{self._table}" WHERE k = %s', (key,)).fetchone()
        return None if row is None else bytes(row[0])

    def put(self, key: bytes, value: bytes) -> None:
        with self._guard("put"):
            self._db.execute(self._upsert, (key, value))

    def delete(self, key: bytes) -> None:
        with self._guard("delete"):
            self._db.execute(f'DELETE FROM "{self._table}" WHERE k = %s', (key,))

    def keys(self) -> Iterator[bytes]:
        with self._guard("keys"):
            rows = self._db.execute(f'SELECT k FROM "{self._table}"').fetchall()
        return (bytes(row[0]) for row in rows)

    def get_many(self, keys: Sequence[bytes]) -> list[bytes | None]:
        if not keys:
            return []
        with self._guard("get_many"):
            rows = self._db.execute(f'SELECT k, v FROM "{self._table}" WHERE k = ANY(%s)', (list(keys),)).fetchall()
        found = {bytes(k): bytes(v) for k, v in rows}
        return [found.get(key) for key in keys]

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> None:
        pairs = list(items)
        if not pairs:
            return
        with self._guard("put_many"), self._db.transaction(), self._db.cursor() as cursor:
            cursor.executemany(self._upsert, pairs)

    def cleanup(self) -> None:
        with self._guard("cleanup"):
            self._db.execute(f'DROP TABLE IF EXISTS "{self._table}"')

    def list_namespaces(self) -> list[str]:
        with self._guard("list namespaces"):
            rows = self._db.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()").fetchall()
        return sorted(name for (name,) in rows if RUN_IDENTIFIER_PATTERN.match(name))

    def drop_namespace(self, name: str) -> None:
        name = swept_name(name, RUN_IDENTIFIER_PATTERN)
        with self._guard("drop namespace"):
            self._db.execute(f'DROP TABLE IF EXISTS "{name}"')

    def _close(self) -> None:
        self._db.close()
