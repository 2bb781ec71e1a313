"""``mongodb``: one document per node on any MongoDB-wire server, diffs as one unordered bulk write.

Databases ``sbts_<namespace>_running`` and ``sbts_<namespace>_operational``
belong to the run; :meth:`cleanup` drops those two and nothing else, so a
user's databases and collections on the same server survive. Each module
is a collection; each owner's push data a collection ``<module>+<cid>+<sid>``.

A node is a document with ``_id`` = its path and the one-letter fields of
the Redis layout (``s`` sort key, ``d`` depth, ...). Reserved documents
have ids that cannot start a path: ``"0"`` last-modified time, ``"2"``
owner, group and permission bits, ``"#" + list`` a user-ordered list's
maximum position. Loads skip ids that do not start with ``/``.

A commit is one unordered bulk write of the non-user-ordered operations
(an insert per created node, a delete by ``_id`` plus one delete of the
descendants per deleted subtree, ``$set`` for replaced values and for
unchanged ancestors' default flag and origin), with user-ordered instances
placed one at a time, then the ``"0"`` upsert: as sysrepo's plugin, so
``remove whole subtree`` is 2 operations and ``remove all items`` 2N.

The descendants' delete is sysrepo's regex on ``_id``, except when the
subtree has exactly one stored descendant (a list entry with one non-key
leaf, as every entry of the study's lists): then it deletes that one by its
exact ``_id``, still one operation. No FerretDB backend hands a regex to
its database, so each regex delete reads and decodes the whole collection:
N of them made ``remove all items`` and every "delete the list" cleanup
quadratic (hours at N = 10,000), where an exact ``_id`` is an index lookup.
"""

from __future__ import annotations

import re
import time
from itertools import islice
from typing import Any

from stratabench.errors import UnavailableError
from stratabench.systems.treestore import user_order
from stratabench.systems.treestore.backends import TREE_BACKENDS
from stratabench.systems.treestore.backends.base import OPERATIONAL, RUNNING, Access, Owner, TreeBackend, permitted
from stratabench.systems.treestore.diff import Diff
from stratabench.systems.treestore.records import (
    UO_GAP, Deleted, NodeRecord, Scope, TreeBuilder, store_plan, tree_records,
)
from stratabench.systems.treestore.schema import SchemaNode
from stratabench.systems.treestore.tree import Inner

__all__ = ["MongodbBackend"]

_PROJECTION = {"_id": 1, "d": 1, "n": 1, "y": 1, "v": 1, "o": 1}


def _document(record: NodeRecord, order: int | None) -> dict[str, Any]:
    document: dict[str, Any] = {"_id": record.path, "s": record.sort_key, "d": record.depth, "n": record.name,
                                "k": record.kind, "f": False}
    for name, value in (("m", record.module), ("y", record.keys), ("v", record.value), ("u", record.uo_parent),
                        ("r", record.uo_prev), ("g", record.origin), ("o", order)):
        if value is not None:
            document[name] = value
    return document


def _below(path: str) -> dict[str, Any]:
    """The descendants of ``path``: ids that continue it with ``/`` or ``[``."""
    return {"_id": {"$regex": f"^{re.escape(path)}[/[]"}}


def _descendants(deleted: Deleted) -> dict[str, Any]:
    """The filter of a deleted subtree's descendants: the one's exact ``_id`` if only one is stored, else :func:`_below`."""
    below = [record.path for record in islice(deleted.records(), 1, 3)]  # the subtree's own record first; two say "more than one"
    return {"_id": below[0]} if len(below) == 1 else _below(deleted.path)


class _Positions:
    """The position primitives of :mod:`..user_order` as single MongoDB operations."""

    def __init__(self, collection: Any) -> None:
        self.collection = collection

    def max_order(self, uo_parent: str) -> int | None:
        found = self.collection.find_one({"_id": f"#{uo_parent}"})
        return None if found is None else int(found["o"])

    def set_max(self, uo_parent: str, order: int) -> None:
        self.collection.update_one({"_id": f"#{uo_parent}"}, {"$set": {"o": order}}, upsert=True)

    def order_of(self, path: str) -> int:
        return int(self.collection.find_one({"_id": path}, {"o": 1})["o"])

    def prev_of(self, path: str) -> str:
        return str(self.collection.find_one({"_id": path}, {"r": 1}).get("r", ""))

    def successor(self, uo_parent: str, prev: str) -> tuple[str, int] | None:
        found = self.collection.find_one({"r": prev, "u": uo_parent}, {"o": 1})
        return None if found is None else (found["_id"], int(found["o"]))

    def set_order(self, path: str, order: int) -> None:
        self.collection.update_one({"_id": path}, {"$set": {"o": order}})

    def set_prev(self, path: str, prev: str) -> None:
        self.collection.update_one({"_id": path}, {"$set": {"r": prev}})

    def insert(self, record: NodeRecord, order: int) -> None:
        self.collection.insert_one(_document(record, order))


@TREE_BACKENDS.register("mongodb", requires=("pymongo",), extra="stores")
class MongodbBackend(TreeBackend):
    """One document per node on a MongoDB-wire server (FerretDB locally), diffs as bulk writes."""

    service = "mongodb"

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        from pymongo.errors import PyMongoError

        return (PyMongoError, OSError)

    def _client(self) -> Any:
        import pymongo

        if not self.url:
            raise UnavailableError(f"{self.name}: needs a MongoDB-wire server; run with --services local or --store mongodb://HOST:PORT/")
        client: Any = pymongo.MongoClient(self.url, connectTimeoutMS=5000, socketTimeoutMS=60000,
                                     serverSelectionTimeoutMS=5000, retryWrites=False, retryReads=False)
        client.admin.command("ping")
        return client

    def _open(self) -> None:
        with self.guard("connect"):
            self._admin = self._client()
            info = self._admin.server_info()
            build = self._admin.admin.command("buildInfo")
        ferret = build.get("ferretdb") or build.get("ferretdbVersion")
        self.server_name = "FerretDB" if ferret else "MongoDB"
        self.server_version = str(info.get("version", "unknown")) + (f" (FerretDB {ferret})" if isinstance(ferret, str) else "")

    def database_name(self, ds: str) -> str:
        return f"sbts_{self.namespace}_{ds}"

    def _collection(self, client: Any, module: SchemaNode, ds: str, owner: Owner | None) -> Any:
        name = module.name if owner is None else f"{module.name}+{owner[0]}+{owner[1]}"
        return client[self.database_name(ds)][name]

    def connect(self) -> Any:
        with self.guard("connect"):
            return self._client()

    def disconnect(self, conn: Any) -> None:
        conn.close()

    def install(self, module: SchemaNode, ds: str, access: Access) -> None:
        with self.guard("install"):
            collection = self._collection(self._admin, module, ds, None)
            collection.insert_one({"_id": "2", "owner": access.uid, "group": access.gid, "perm": access.mode})
            self._indexes(collection)

    @staticmethod
    def _indexes(collection: Any) -> None:
        collection.create_index("s")
        collection.create_index([("r", 1), ("u", 1)])
        collection.create_index([("o", 1), ("u", 1)])

    def uninstall(self, module: SchemaNode, ds: str) -> None:
        with self.guard("uninstall"):
            database = self._admin[self.database_name(ds)]
            for name in database.list_collection_names():
                if name == module.name or name.startswith(f"{module.name}+"):
                    database.drop_collection(name)

    def load(self, conn: Any, module: SchemaNode, ds: str, owner: Owner | None,
             scopes: list[Scope] | None) -> Inner | None:
        collection = self._collection(conn, module, ds, owner)
        query: dict[str, Any] = {}
        if scopes is not None:
            clauses: list[dict[str, Any]] = []
            for scope in scopes:
                if scope.instances_only:
                    clauses.append({"_id": {"$regex": f"^{re.escape(scope.path)}\\["}})
                else:
                    clauses += [{"_id": scope.path}, _below(scope.path)]
                clauses += [{"_id": path} for path in scope.ancestors]
            query = {"$or": clauses}
        with self.guard("load"):
            documents = list(collection.find(query, _PROJECTION).sort("s", 1).batch_size(100_000))
        builder = TreeBuilder(module)
        builder.add_rows((doc["d"], doc["n"], doc.get("y"), doc.get("v"), doc.get("o"))
                         for doc in documents if doc["_id"].startswith("/"))
        return builder.finish()

    def store_prepare(self, conn: Any, module: SchemaNode, ds: str, owner: Owner | None,
                      diff: Diff | None, tree: Inner | None, origin: str | None) -> None:
        """Nothing: the sysrepo plugin writes everything in its commit."""

    def store_commit(self, conn: Any, module: SchemaNode, ds: str, owner: Owner | None,
                     diff: Diff | None, tree: Inner | None, origin: str | None) -> None:
        collection = self._collection(conn, module, ds, owner)
        with self.guard("store"):
            if tree is None and owner is not None:
                collection.drop()
                return
            if diff is None:
                self._replace(collection, tree, origin)
            else:
                self._apply(collection, diff, origin)
            now = time.time_ns()
            collection.update_one({"_id": "0"}, {"$set": {"sec": now // 1_000_000_000, "nsec": now % 1_000_000_000}},
                                  upsert=True)

    def _replace(self, collection: Any, tree: Inner | None, origin: str | None) -> None:
        collection.delete_many({"_id": {"$not": re.compile("^[012]")}})
        orders: dict[str, int] = {}
        documents = []
        for record in tree_records(tree, origin):
            order = None
            if record.uo_parent is not None:
                order = orders[record.uo_parent] = orders.get(record.uo_parent, 0) + UO_GAP
            documents.append(_document(record, order))
        documents += [{"_id": f"#{parent}", "o": top} for parent, top in orders.items()]
        if documents:
            collection.insert_many(documents, ordered=False)

    def _apply(self, collection: Any, diff: Diff, origin: str | None) -> None:
        from pymongo import DeleteMany, DeleteOne, InsertOne, UpdateOne

        plan = store_plan(diff, origin)
        operations: list[Any] = []
        for deleted in plan.deletes:
            operations.append(DeleteOne({"_id": deleted.path}))
            if deleted.has_children:
                operations.append(DeleteMany(_descendants(deleted)))
        for path, value in plan.replaces:
            operations.append(UpdateOne({"_id": path}, {"$set": {"v": value, "f": False}}))
        touched: dict[str, Any] = {"f": False} if origin is None else {"f": False, "g": origin}
        operations += [UpdateOne({"_id": path}, {"$set": touched}) for path in plan.touched]
        operations += [InsertOne(_document(record, None)) for record in plan.creates]
        if operations:
            collection.bulk_write(operations, ordered=False)
        positions = _Positions(collection)
        for deleted in plan.uo_deletes:
            user_order.unlink(positions, deleted.path, deleted.uo_parent)
            collection.delete_one({"_id": deleted.path})
            if deleted.has_children:
                collection.delete_many(_descendants(deleted))
        for record in plan.uo_creates:
            user_order.place(positions, record)

    def access(self, conn: Any, module: SchemaNode, ds: str) -> tuple[bool, bool]:
        with self.guard("read its permission document"):
            found = self._collection(conn, module, ds, None).find_one({"_id": "2"})
        if found is None:
            return False, False
        return permitted(int(found["owner"]), int(found["group"]), int(found["perm"]))

    def last_modified(self, conn: Any, module: SchemaNode, ds: str) -> int | None:
        with self.guard("read last-modified"):
            found = self._collection(conn, module, ds, None).find_one({"_id": "0"})
        return None if found is None else int(found["sec"]) * 1_000_000_000 + int(found["nsec"])

    def owners(self, conn: Any, module: SchemaNode) -> list[Owner]:
        with self.guard("list owners"):
            names = conn[self.database_name(OPERATIONAL)].list_collection_names()
        found = []
        for name in names:
            if name.startswith(f"{module.name}+"):
                cid, sid = name.split("+")[1:3]
                found.append((int(cid), int(sid)))
        return sorted(found)

    def cleanup(self) -> None:
        with self.guard("clean up"):
            try:
                for ds in (RUNNING, OPERATIONAL):
                    self._admin.drop_database(self.database_name(ds))
            finally:
                self._admin.close()

    def header(self) -> dict[str, Any]:
        return {**super().header(), "mongodb_server": self.server_name, "server_version": self.server_version}
