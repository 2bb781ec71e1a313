"""Records as table rows in SQLite, PostgreSQL or MariaDB: the cache study's uncached baseline.

The study's datastore held one entity per record and its reads were
queries: ``get_by_key_name`` for one record, ``all().fetch(1000)`` for the
list. :class:`RowTable` is that, on a real database: a table of the
cell's own (``stratabench_{namespace}``, one column per field, the first
field as primary key), a primary-key ``SELECT`` for one record, an
``ORDER BY`` key ``LIMIT n`` scan for the list, and a row-to-record
conversion compiled for the schema (:func:`~stratabench.layers.codecs.base.row_converter`),
so that a read hands back the same records as every cache tier.
Writes are upserts in one transaction.

Column types:

=========== =================== ==================== =====================
field       SQLite              PostgreSQL           MariaDB
=========== =================== ==================== =====================
``str``     TEXT                text                 LONGTEXT (key: VARCHAR(255))
``int``     INTEGER             bigint               BIGINT
``bool``    INTEGER 0/1         boolean              BOOLEAN
``float``   REAL                double precision     DOUBLE
``time_us`` INTEGER µs (UTC)    timestamptz          DATETIME(6), UTC
``list_*``  TEXT (JSON)         text[] / bigint[]    LONGTEXT (JSON)
=========== =================== ==================== =====================

Needs ``psycopg`` for PostgreSQL and ``pymysql`` for MariaDB
(``stratabench[stores]``), imported when a table is opened. A table is
dropped by :meth:`RowTable.cleanup`, and nothing else is ever touched.
Failures are the stores' own one-line :class:`~stratabench.errors.StoreError`
(:class:`~stratabench.layers.stores.base.StoreConnection`), the URL's password removed.
"""

from __future__ import annotations

import json
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any, ClassVar
from urllib.parse import unquote, urlsplit

from stratabench.datasets.schema import Row, Schema, datetime_from_us, us_from_datetime
from stratabench.errors import UnavailableError
from stratabench.layers.codecs.base import row_converter
from stratabench.layers.stores.base import Store, StoreConnection, parse_store_url
from stratabench.layers.stores.namespaces import namespace_identifier
from stratabench.layers.stores.mysql import MysqlStore, connect as mysql_connect, transaction as mysql_transaction
from stratabench.layers.stores.postgresql import PostgresqlStore, connect as postgresql_connect
from stratabench.layers.stores.sqlite import SqliteStore, checkpoint_apart, connect as sqlite_connect
from stratabench.options import RunOptions
from stratabench.redact import redact
from stratabench.settings import SettingReader

__all__ = ["ROW_TABLES", "MariadbRows", "PostgresqlRows", "RowTable", "SqliteRows", "open_row_table", "payload_bytes"]


def payload_bytes(values: Sequence[Any]) -> int:
    """Bytes of one row's values as sent to the database, without the database's own overhead.

    Text counts its UTF-8 bytes, numbers and timestamps 8, booleans 1, a
    list the sum of its items.
    """
    total = 0
    for value in values:
        if isinstance(value, str):
            total += len(value.encode("utf-8", "surrogatepass"))
        elif isinstance(value, (bytes, bytearray)):
            total += len(value)
        elif isinstance(value, bool):
            total += 1
        elif isinstance(value, (list, tuple)):
            total += payload_bytes(value)
        elif value is not None:
            total += 8
    return total


def _utc_naive(value: datetime) -> datetime:
    return value.astimezone(timezone.utc).replace(tzinfo=None)


def _utc_aware(value: datetime) -> datetime:
    return value.replace(tzinfo=timezone.utc)


class RowTable(StoreConnection, ABC):
    """One schema's records as rows of a table of the cell's own.

    Parameters
    ----------
    url
        The database; kept private, only shown redacted.
    schema
        The records' schema; the first field is the primary key.
    namespace
        Names the table (``stratabench_{namespace}``).
    options
        Run options, for the settings of :attr:`store` (``sqlite.journal_mode``).
    server_pids
        Process ids of the local server, for ``server_cpu_ns``.
    """

    #: The store plugin of the same database, whose settings (timeouts, pragmas) the table uses too.
    store: ClassVar[type[Store]]
    #: SQL type of each field type, and of a text primary key.
    types: ClassVar[dict[str, str]]
    text_key: ClassVar[str]
    placeholder: ClassVar[str] = "%s"
    #: Field type → expression converting a value for the database (``{}`` is the value).
    to_db: ClassVar[dict[str, str]] = {}
    #: Field type → expression converting a column value back into the record's value.
    from_db: ClassVar[dict[str, str]] = {}

    def __init__(self, url: str, schema: Schema, *, namespace: str, options: RunOptions | None = None,
                 server_pids: tuple[int, ...] = ()) -> None:
        self._url = url
        self._parts = parse_store_url(url)
        self.schema = schema
        self.options = options or RunOptions()
        self.server_pids = tuple(server_pids)
        self.table = namespace_identifier(namespace)
        names = ", ".join(self.quote(name) for name in schema.names)
        key = self.quote(schema.fields[0].name)
        marks = ", ".join([self.placeholder] * len(schema.fields))
        self.select_one_sql = f"SELECT {names} FROM {self.quote(self.table)} WHERE {key} = {self.placeholder}"
        self.select_all_sql = f"SELECT {names} FROM {self.quote(self.table)} ORDER BY {key} LIMIT {self.placeholder}"
        self.upsert_sql = f"INSERT INTO {self.quote(self.table)} ({names}) VALUES ({marks}) {self.conflict_clause()}"
        namespace_of = {"_dt": datetime_from_us, "_us": us_from_datetime, "_dumps": json.dumps, "_loads": json.loads,
                        "_naive": _utc_naive, "_aware": _utc_aware}
        self.to_records: Callable[[Sequence[Any]], list[Row]] = row_converter(
            schema, convert=self.from_db, namespace=namespace_of)
        self.to_values: Callable[[Sequence[Row]], list[Row]] = row_converter(
            schema, convert=self.to_db, namespace=namespace_of)
        self._closed = False
        self._db: Any = None
        try:
            self._connect()
            self.execute_script(self.create_sql())
        except ImportError as error:
            raise UnavailableError(f"{self.name} rows need the {error.name} package: pip install 'stratabench[stores]'") from None
        except self._driver_errors() as error:
            raise self._unreachable(error) from error

    @property
    def config(self) -> SettingReader:
        """The run's values of :attr:`store`'s settings."""
        return SettingReader(self.store, self.options)

    # -- what each database says ---------------------------------------------

    @staticmethod
    def quote(identifier: str) -> str:
        return f'"{identifier}"'

    def conflict_clause(self) -> str:
        key = self.quote(self.schema.fields[0].name)
        updates = ", ".join(f"{self.quote(n)} = excluded.{self.quote(n)}" for n in self.schema.names[1:])
        return f"ON CONFLICT ({key}) DO UPDATE SET {updates}" if updates else f"ON CONFLICT ({key}) DO NOTHING"

    def create_sql(self) -> str:
        columns = []
        for index, field in enumerate(self.schema.fields):
            kind = self.text_key if index == 0 and field.type == "str" else self.types[field.type]
            columns.append(f"{self.quote(field.name)} {kind} NOT NULL")
        key = self.quote(self.schema.fields[0].name)
        return f"CREATE TABLE IF NOT EXISTS {self.quote(self.table)} ({', '.join(columns)}, PRIMARY KEY ({key}))"

    @abstractmethod
    def _connect(self) -> None:
        """Open the connection (its driver errors become :meth:`_unreachable` errors)."""

    @abstractmethod
    def execute_script(self, sql: str) -> None:
        """Run one statement with no parameters and no result."""

    def reader(self) -> tuple[Callable[[Any], list[Row]], Callable[[int], list[Row]]]:
        """The timed reads: (one record by key, the first ``n`` records), each returning records.

        This one runs the query with the connection's ``execute``, as
        sqlite3 and psycopg offer it; a driver without one overrides
        :meth:`query`.
        """
        query, to_records, one_sql, all_sql = self.query(), self.to_records, self.select_one_sql, self.select_all_sql
        errors, guard = self._driver_errors(), self._guard

        def one(key: Any) -> list[Row]:
            try:
                return to_records(query(one_sql, (key,)))
            except errors:
                with guard("select"):
                    raise

        def first(n: int) -> list[Row]:
            try:
                return to_records(query(all_sql, (n,)))
            except errors:
                with guard("select"):
                    raise

        return one, first

    def query(self) -> Callable[[str, tuple[Any, ...]], list[Any]]:
        """A function that runs one parameterized query and returns all its rows."""
        execute = self._db.execute

        def run(sql: str, args: tuple[Any, ...]) -> list[Any]:
            rows: list[Any] = execute(sql, args).fetchall()
            return rows

        return run

    @abstractmethod
    def write_rows(self, values: Sequence[Row]) -> None:
        """Upsert database-ready rows in one transaction."""

    @abstractmethod
    def _close(self) -> None: ...

    # -- shared -------------------------------------------------------------------

    def write(self, rows: Sequence[Row]) -> None:
        """Upsert records (converted for the database) in one transaction."""
        values = self.to_values(rows)
        with self._guard("upsert"):
            self.write_rows(values)

    def payload(self, rows: Sequence[Row]) -> int:
        """Bytes of the rows' values as sent (see :func:`payload_bytes`)."""
        return sum(payload_bytes(values) for values in self.to_values(rows))

    def cleanup(self) -> None:
        """Drop the table (and nothing else), as :meth:`Store.cleanup` deletes the store's namespace."""
        with self._guard("cleanup"):
            self.execute_script(f"DROP TABLE IF EXISTS {self.quote(self.table)}")

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                self._close()
            except Exception:  # noqa: BLE001 -- closing a connection to a dead server must not fail
                pass

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {redact(self._url)} table={self.table}>"


class SqliteRows(RowTable):
    """An SQLite table in a file (``sqlite:///path``)."""

    name = "sqlite"
    store = SqliteStore
    placeholder = "?"
    types = {"str": "TEXT", "int": "INTEGER", "bool": "INTEGER", "float": "REAL", "time_us": "INTEGER",
             "list_str": "TEXT", "list_int": "TEXT"}
    text_key = "TEXT"
    to_db = {"time_us": "_us({})", "list_str": "_dumps({})", "list_int": "_dumps({})"}
    from_db = {"time_us": "_dt({})", "list_str": "_loads({})", "list_int": "_loads({})", "bool": "bool({})"}

    def _connect(self) -> None:
        self._db = sqlite_connect(unquote(urlsplit(self._url).path), self.config)

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        return (sqlite3.Error, OSError)

    def create_sql(self) -> str:
        sql = super().create_sql()
        # An INTEGER key becomes the rowid: SQLite's fastest lookup and scan.
        return sql + " WITHOUT ROWID" if self.schema.fields[0].type == "str" else sql

    def execute_script(self, sql: str) -> None:
        self._db.execute(sql)

    def write_rows(self, values: Sequence[Row]) -> None:
        self._db.execute("BEGIN")
        try:
            self._db.executemany(self.upsert_sql, values)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def defer_upkeep(self) -> Callable[[], None]:
        """:class:`~stratabench.layers.stores.base.DeferredUpkeep`: the WAL's checkpoint, as the SQLite store's."""
        return checkpoint_apart(self._db, self._guard)

    def _close(self) -> None:
        self._db.close()


class PostgresqlRows(RowTable):
    """A PostgreSQL table (psycopg 3, server-side prepared statements after a few runs)."""

    name = "postgresql"
    store = PostgresqlStore
    service = "postgresql"
    default_port = PostgresqlStore.default_port
    types = {"str": "text", "int": "bigint", "bool": "boolean", "float": "double precision",
             "time_us": "timestamptz", "list_str": "text[]", "list_int": "bigint[]"}
    text_key = "text"

    def _connect(self) -> None:
        self._db = postgresql_connect(self._url, self.config)
        # timestamptz comes back in the session's zone: UTC gives datetime.timezone.utc.
        self._db.execute("SET TIME ZONE 'UTC'")
        if self.server_pids:
            backend = self._db.execute("SELECT pg_backend_pid()").fetchone()[0]
            self.server_pids = (*self.server_pids, int(backend))

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        import psycopg

        return (psycopg.Error, OSError)

    def execute_script(self, sql: str) -> None:
        self._db.execute(sql)

    def write_rows(self, values: Sequence[Row]) -> None:
        with self._db.transaction(), self._db.cursor() as cursor:
            cursor.executemany(self.upsert_sql, values)

    def _close(self) -> None:
        self._db.close()


class MariadbRows(RowTable):
    """A MariaDB/MySQL InnoDB table (PyMySQL; multi-row inserts for a batch)."""

    name = "mariadb"
    store = MysqlStore
    service = "mariadb"
    default_port = MysqlStore.default_port
    types = {"str": "LONGTEXT", "int": "BIGINT", "bool": "BOOLEAN", "float": "DOUBLE", "time_us": "DATETIME(6)",
             "list_str": "LONGTEXT", "list_int": "LONGTEXT"}
    text_key = "VARCHAR(255)"
    to_db = {"time_us": "_naive({})", "list_str": "_dumps({})", "list_int": "_dumps({})"}
    from_db = {"time_us": "_aware({})", "list_str": "_loads({})", "list_int": "_loads({})", "bool": "bool({})"}

    @staticmethod
    def quote(identifier: str) -> str:
        return f"`{identifier}`"

    def conflict_clause(self) -> str:
        updates = ", ".join(f"{self.quote(n)} = VALUES({self.quote(n)})" for n in self.schema.names[1:])
        key = self.quote(self.schema.fields[0].name)
        return f"ON DUPLICATE KEY UPDATE {updates or f'{key} = {key}'}"

    def create_sql(self) -> str:
        return super().create_sql() + " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"

    def _connect(self) -> None:
        self._db = mysql_connect(self._url, self.config)

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        import pymysql

        return (pymysql.MySQLError, OSError)

    def execute_script(self, sql: str) -> None:
        with self._db.cursor() as cursor:
            cursor.execute(sql)

    def query(self) -> Callable[[str, tuple[Any, ...]], list[Any]]:
        cursor = self._db.cursor()
        execute, fetchall = cursor.execute, cursor.fetchall

        def run(sql: str, args: tuple[Any, ...]) -> list[Any]:
            execute(sql, args)
            rows: list[Any] = fetchall()
            return rows

        return run

    def write_rows(self, values: Sequence[Row]) -> None:
        with mysql_transaction(self._db), self._db.cursor() as cursor:
            cursor.executemany(self.upsert_sql, values)

    def _close(self) -> None:
        self._db.close()


ROW_TABLES: dict[str, type[RowTable]] = {"sqlite": SqliteRows, "postgresql": PostgresqlRows, "mariadb": MariadbRows}
"""The row table of each database tier."""


def open_row_table(tier_kind: str, url: str, schema: Schema, *, namespace: str,
                   options: RunOptions | None = None) -> RowTable:
    """Open (and create) the row table of ``tier_kind`` at ``url``, with the server's pids when it is local."""
    from stratabench.services.state import pids_for_address

    parts = urlsplit(url)
    pids = pids_for_address(parts.hostname, parts.port) if parts.hostname else ()
    return ROW_TABLES[tier_kind](url, schema, namespace=namespace, options=options, server_pids=pids)
