"""MongoDB (or a compatible server) with pymongo: a database of the run's own.

Needs the ``pymongo`` package (``stratabench[stores]``) and a server:
``mongodb://[user:password@]host:port/[database]``. Without a database in
the URL, this namespace is the database ``stratabench_{namespace}`` with one
collection ``kv``, and :meth:`cleanup` drops that database. With a database
in the URL (for a user allowed only there), the namespace is the collection
``stratabench_{namespace}`` in it, and :meth:`cleanup` drops only that
collection. ``stratabench clean`` finds the databases (or, with a database
in the URL, the collections) of runs by the shape of their names
(:class:`~stratabench.layers.stores.base.Sweepable`). Each entry is a
document ``{_id: key, v: value}``, the value BSON binary and the key a
string when it is UTF-8 (see :func:`_document_id`); a batch read is one
``$in`` query, a batch write one ``$in`` delete and one unordered insert.

A document is at most the server's ``maxBsonObjectSize`` (16 MiB), so a
larger value raises :class:`~stratabench.errors.ValueTooLargeError`.

Settings (``mongodb.*``: timeouts): ``stratabench list settings`` shows
them with their defaults. Retryable reads and writes are off, so failures
are reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import unquote

from stratabench.layers.stores import STORES
from stratabench.layers.stores.base import TIMEOUT_RANGE, Store, timeout_settings
from stratabench.layers.stores.namespaces import (
    RUN_IDENTIFIER_PATTERN,
    TREESTORE_DATABASE_PATTERN,
    namespace_identifier,
    swept_name,
)
from stratabench.settings import Setting

__all__ = ["MongodbStore"]

# Room in a document for _id, the field name and BSON framing besides the value.
_DOCUMENT_OVERHEAD = 1024
_DEFAULT_MAX_BSON = 16 * 1024 * 1024
_AUTHENTICATION_FAILED = 18  # MongoDB's error code


@STORES.register("mongodb", requires=("pymongo",), extra="stores")
class MongodbStore(Store):
    """A MongoDB-compatible server; a database (or collection) of the run's own."""

    schemes = ("mongodb",)
    service = "mongodb"
    default_port = 27017
    settings = (
        *timeout_settings("mongodb"),
        Setting("mongodb.server_selection_timeout", "5", "seconds an operation waits for a server that has gone away",
                "number", minimum=TIMEOUT_RANGE[0], maximum=TIMEOUT_RANGE[1]),
    )

    def _open(self) -> None:
        import pymongo
        from pymongo.errors import PyMongoError

        named = unquote(self._parts.path.strip("/"))
        own = namespace_identifier(self.namespace)
        self._own_database = not named
        try:
            self._client: Any = pymongo.MongoClient(
                self._url,
                connectTimeoutMS=int(self.config.number("mongodb.connect_timeout") * 1000),
                socketTimeoutMS=int(self.config.number("mongodb.socket_timeout") * 1000),
                serverSelectionTimeoutMS=int(self.config.number("mongodb.server_selection_timeout") * 1000),
                retryWrites=False,
                retryReads=False,
            )
            hello = self._client.admin.command("hello")
            self._database = self._client[named or own]
            # `hello` needs no credentials; this does, so a refused client is one line now, not at every request.
            self._database.list_collection_names()
        except (PyMongoError, OSError) as exc:
            raise self._unreachable(exc) from exc
        self._max_bson = int(hello.get("maxBsonObjectSize", _DEFAULT_MAX_BSON))
        self._collection = self._database["kv" if self._own_database else own]

    def _reason(self, exc: BaseException) -> str:
        text = str(exc)
        if "authentication failed" in text or getattr(exc, "code", None) == _AUTHENTICATION_FAILED:
            # FerretDB's refusal is PostgreSQL's, on the last of several lines of its call stack.
            return ("authentication refused: give the server's user name and password in the URL "
                    "(mongodb://USER:PASSWORD@HOST:PORT/; for stratabench's own server, as `services up` shows it)")
        # pymongo appends its timeouts and a whole topology description: keep the cause.
        reason = super()._reason(exc)
        for tail in (" (configured timeouts", ", Timeout:"):
            reason = reason.split(tail, 1)[0]
        return reason

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        from pymongo.errors import PyMongoError

        return (PyMongoError, OSError)

    @property
    def item_limit_bytes(self) -> int:
        """The largest value that fits in one document with its key."""
        return self._max_bson - _DOCUMENT_OVERHEAD

    def _check(self, key: bytes, value: bytes) -> None:
        if len(key) + len(value) > self.item_limit_bytes:
            raise self._too_large(
                len(value), self.item_limit_bytes - len(key), "a BSON document is limited to maxBsonObjectSize"
            )

    def get(self, key: bytes) -> bytes | None:
        with self._guard("get"):
            document = self._collection.find_one({"_id": _document_id(key)}, {"v": 1})
        return None if document is None else bytes(document["v"])

    def put(self, key: bytes, value: bytes) -> None:
        self._check(key, value)
        with self._guard("put"):
            self._collection.replace_one({"_id": _document_id(key)}, {"_id": _document_id(key), "v": value},
                                         upsert=True)

    def delete(self, key: bytes) -> None:
        with self._guard("delete"):
            self._collection.delete_one({"_id": _document_id(key)})

    def keys(self) -> Iterator[bytes]:
        with self._guard("keys"):
            keys = [_key(document["_id"]) for document in self._collection.find({}, {"_id": 1})]
        return iter(keys)

    def get_many(self, keys: Sequence[bytes]) -> list[bytes | None]:
        if not keys:
            return []
        with self._guard("get_many"):
            found = {_key(d["_id"]): bytes(d["v"])
                     for d in self._collection.find({"_id": {"$in": [_document_id(key) for key in keys]}})}
        return [found.get(key) for key in keys]

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> None:
        # One delete of the batch's keys, then one insert, not a bulk of upserts: FerretDB 1.24 holds a
        # pooled PostgreSQL connection for every document one command updates until the command ends, so
        # a batch overwriting as many stored documents as its pool has connections (20 on the project's
        # server) never returned, and every matrix cell's second round (the records written again) timed out.
        values: dict[bytes, bytes] = {}
        for key, value in items:
            self._check(key, value)
            values[key] = value  # the last value of a repeated key wins, as with one put after another
        if values:
            with self._guard("put_many"):
                self._collection.delete_many({"_id": {"$in": [_document_id(key) for key in values]}})
                self._collection.insert_many([{"_id": _document_id(key), "v": value} for key, value in values.items()],
                                             ordered=False)

    def cleanup(self) -> None:
        with self._guard("cleanup"):
            if self._own_database:
                self._client.drop_database(self._database.name)
            else:
                self._collection.drop()

    def list_namespaces(self) -> list[str]:
        """The databases (or, with a database in the URL, the collections) of runs.

        Without a database in the URL, also the treestore study's databases
        (``sbts_{namespace}_running``, :mod:`~stratabench.layers.stores.namespaces`).
        A URL that names a database is for a user allowed only there, who
        may not list databases: only that database's collections are looked at.
        """
        with self._guard("list namespaces"):
            if self._own_database:
                names = [str(name) for name in self._client.list_database_names()]
                return sorted(name for name in names
                              if RUN_IDENTIFIER_PATTERN.match(name) or TREESTORE_DATABASE_PATTERN.match(name))
            names = [str(name) for name in self._database.list_collection_names()]
        return sorted(name for name in names if RUN_IDENTIFIER_PATTERN.match(name))

    def drop_namespace(self, name: str) -> None:
        if self._own_database and TREESTORE_DATABASE_PATTERN.match(name):
            with self._guard("drop namespace"):
                self._client.drop_database(name)
            return
        name = swept_name(name, RUN_IDENTIFIER_PATTERN)
        with self._guard("drop namespace"):
            if self._own_database:
                self._client.drop_database(name)
            else:
                self._database.drop_collection(name)

    def _close(self) -> None:
        self._client.close()


def _document_id(key: bytes) -> str | bytes:
    """A key as its document's ``_id``: a string when it is UTF-8 without NUL, else BSON binary.

    FerretDB 1.24 hands PostgreSQL a filter on a string ``_id`` but filters a binary one itself, reading the
    whole collection: a record's read took 13 ms among 2,000 documents, 0.6 ms by string. PostgreSQL's JSON
    holds no NUL, so such keys stay binary. The two types never collide, so :func:`_key` reads either back.
    """
    if b"\x00" not in key:
        try:
            return key.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return key


def _key(document_id: str | bytes) -> bytes:
    return document_id.encode("utf-8") if isinstance(document_id, str) else bytes(document_id)
