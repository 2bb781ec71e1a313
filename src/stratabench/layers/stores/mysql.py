"""MariaDB or MySQL with PyMySQL: a key/value table of the run's own.

Needs the ``pymysql`` package (``stratabench[stores]``) and a server:
``mysql://user:password@host:port/database`` or ``mariadb://...``; the
database must exist (the private ``mariadb`` service makes ``stratabench``).
This namespace lives in the InnoDB table ``stratabench_{namespace}``
(``k VARBINARY(512)`` primary key, ``v LONGBLOB``); :meth:`cleanup` drops
that table and nothing else. ``stratabench clean`` finds the tables of runs
in the URL's database by the shape of their names
(:class:`~stratabench.layers.stores.base.Sweepable`). Each ``put`` is one autocommitted upsert;
``put_many`` is one transaction of multi-row inserts.

A value must fit in one packet: the store reads ``max_allowed_packet``
(16 MB by default on MariaDB) and raises
:class:`~stratabench.errors.ValueTooLargeError` for more. Keys are at most
512 bytes.

Settings (``mysql.*``: timeouts): ``stratabench list settings`` shows them
with their defaults.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import unquote, urlsplit

from stratabench.errors import UsageError
from stratabench.layers.stores import STORES
from stratabench.layers.stores.base import Store, timeout_settings
from stratabench.layers.stores.namespaces import RUN_IDENTIFIER_PATTERN, namespace_identifier, swept_name
from stratabench.settings import SettingReader

__all__ = ["MysqlStore"]

_MAX_KEY = 512
_CHUNK = 500
# Room in the packet for the statement around the value. PyMySQL sends a
# value escaped, which can double its size, so the check is on the escaped form.
_STATEMENT_OVERHEAD = 1024
_PACKET_TOO_LARGE = (1153, 1301)


def connect(url: str, config: SettingReader) -> Any:
    """Open an autocommit PyMySQL connection from a URL, with the ``mysql.*`` timeouts.

    Shared with the cache suite's row tables, so both open the database alike.
    """
    import pymysql

    parts = urlsplit(url)
    timeout = config.number("mysql.socket_timeout")
    return pymysql.connect(
        host=parts.hostname or "127.0.0.1",
        port=parts.port or 3306,
        user=unquote(parts.username or ""),
        password=unquote(parts.password or ""),
        database=unquote(parts.path.strip("/")) or None,
        autocommit=True,
        charset="utf8mb4",
        binary_prefix=True,
        connect_timeout=config.number("mysql.connect_timeout"),
        read_timeout=timeout,
        write_timeout=timeout,
    )


@contextmanager
def transaction(db: Any) -> Iterator[None]:
    """One transaction on an autocommit connection: commit on success, roll back on any error."""
    db.begin()
    try:
        yield
    except BaseException:
        try:
            db.rollback()
        except Exception:  # noqa: BLE001 -- the first error is the one to report
            pass
        raise
    db.commit()


@STORES.register("mysql", requires=("pymysql",), extra="stores")
class MysqlStore(Store):
    """A MariaDB/MySQL table of the run's own."""

    schemes = ("mysql", "mariadb")
    service = "mariadb"
    default_port = 3306
    settings = timeout_settings("mysql")

    def _open(self) -> None:
        import pymysql

        if not unquote(self._parts.path.strip("/")):
            raise UsageError(f"store URL {self.redacted_url!r} names no database; use mysql://user:password@host:port/DATABASE")
        self._table = namespace_identifier(self.namespace, max_length=64)
        try:
            self._db: Any = connect(self._url, self.config)
            with self._db.cursor() as cursor:
                if not self.sweeping:
                    cursor.execute(
                        f"CREATE TABLE IF NOT EXISTS `{self._table}` "
                        f"(k VARBINARY({_MAX_KEY}) NOT NULL PRIMARY KEY, v LONGBLOB NOT NULL) ENGINE=InnoDB"
                    )
                cursor.execute("SELECT @@max_allowed_packet")
                self._max_packet = int(cursor.fetchone()[0])
        except (pymysql.MySQLError, OSError) as exc:
            raise self._unreachable(exc) from exc
        self._upsert = f"INSERT INTO `{self._table}` (k, v) VALUES (%s, %s) ON DUPLICATE KEY UPDATE v = VALUES(v)"

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        import pymysql

        return (pymysql.MySQLError, OSError)

    @property
    def item_limit_bytes(self) -> int:
        """The largest value that fits in one packet (``max_allowed_packet``), if it needs no escaping."""
        return self._max_packet - _STATEMENT_OVERHEAD

    def _check(self, key: bytes, value: bytes) -> None:
        if len(key) > _MAX_KEY:
            raise UsageError(f"key of {len(key)} bytes is too long for the mysql store ({_MAX_KEY} at most)")
        limit = self.item_limit_bytes
        # Escaping at most doubles a value: only a value over half the limit is worth escaping to measure.
        if len(value) > limit or (2 * len(value) > limit and len(self._db.escape(value)) > limit):
            raise self._too_large(
                len(value), self.item_limit_bytes, "raise the server's max_allowed_packet or use another store"
            )

    def _execute(self, operation: str, sql: str, args: Any = None, *, many: bool = False) -> list[Any]:
        import pymysql

        with self._guard(operation), self._db.cursor() as cursor:
            try:
                if many:
                    cursor.executemany(sql, args)
                else:
                    cursor.execute(sql, args)
            except pymysql.MySQLError as exc:
                if exc.args and exc.args[0] in _PACKET_TOO_LARGE:
                    raise self._too_large(0, self.item_limit_bytes, "raise the server's max_allowed_packet") from exc
                raise
            return list(cursor.fetchall())

    def get(self, key: bytes) -> bytes | None:
        rows = self._execute("get", f"SELECT v FROM `{self._table}` WHERE k = %s", (key,))
        return bytes(rows[0][0]) if rows else None

    def put(self, key: bytes, value: bytes) -> None:
        self._check(key, value)
        self._execute("put", self._upsert, (key, value))

    def delete(self, key: bytes) -> None:
        self._execute("delete", f"DELETE FROM `{self._table}` WHERE k = %s", (key,))

    def keys(self) -> Iterator[bytes]:
        rows = self._execute("keys", f"SELECT k FROM `{self._table}`")
        return (bytes(row[0]) for row in rows)

    def get_many(self, keys: Sequence[bytes]) -> list[bytes | None]:
        found: dict[bytes, bytes] = {}
        for start in range(0, len(keys), _CHUNK):
            chunk = list(keys[start : start + _CHUNK])
            marks = ",".join(["%s"] * len(chunk))
            rows = self._execute("get_many", f"SELECT k, v FROM `{self._table}` WHERE k IN ({marks})", chunk)
            found.update((bytes(k), bytes(v)) for k, v in rows)
        return [found.get(key) for key in keys]

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> None:
        pairs = list(items)
        for key, value in pairs:
            self._check(key, value)
        if not pairs:
            return
        with self._guard("put_many"), transaction(self._db):
            self._execute("put_many", self._upsert, pairs, many=True)

    def cleanup(self) -> None:
        self._execute("cleanup", f"DROP TABLE IF EXISTS `{self._table}`")

    def list_namespaces(self) -> list[str]:
        rows = self._execute(
            "list namespaces", "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
        )
        return sorted(str(name) for (name,) in rows if RUN_IDENTIFIER_PATTERN.match(str(name)))

    def drop_namespace(self, name: str) -> None:
        name = swept_name(name, RUN_IDENTIFIER_PATTERN)
        self._execute("drop namespace", f"DROP TABLE IF EXISTS `{name}`")

    def _close(self) -> None:
        try:
            self._db.close()
        except Exception:  # noqa: BLE001 -- closing a connection whose server died must not fail
            pass
