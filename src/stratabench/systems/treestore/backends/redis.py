"""``redis``: one hash per node in Redis, core commands only, diffs through one pipeline.

Keys live under ``sbts:<namespace>:<ds>:<module>`` (push data:
``...:<module>+<cid>+<sid>``), so one run's keys never share a prefix with
another's or a user's; :meth:`cleanup` removes ``sbts:<namespace>:*`` and
nothing else. Each node is a hash ``<ns>:data:<path>`` with one-letter
fields (docs/studies/treestore.md §6.3): ``d`` depth, ``n`` name, ``k`` kind, ``m`` module,
``y`` keys, ``v`` value, ``f`` default flag, ``u`` user-ordered parent,
``o`` position, ``r`` predecessor, ``g`` origin, ``s`` sort key.

Without RediSearch the order index is a sorted set ``<ns>:idx`` (all scores
0) of ``sort_key + "\\x00" + path``: a full load is one lexicographic range
and pipelined ``HMGET``s drained every 10,000; a path load is one range per
path plus the ancestors. A user-ordered list keeps its maximum position at
``<ns>:meta:<list>`` and its successor index in the hash ``<ns>:next:<list>``
(predecessor → path). A commit places user-ordered instances first, one
command at a time, then pipelines everything else; a deleted subtree is
deleted node by node (``DEL`` of every stored node), as sysrepo's plugin
recurses.
"""

from __future__ import annotations

import time
from typing import Any

from stratabench.errors import UnavailableError
from stratabench.systems.treestore import user_order
from stratabench.systems.treestore.backends import TREE_BACKENDS
from stratabench.systems.treestore.backends.base import OPERATIONAL, Access, Owner, TreeBackend, permitted
from stratabench.systems.treestore.diff import Diff
from stratabench.systems.treestore.records import (
    UO_GAP, Deleted, NodeRecord, Scope, TreeBuilder, store_plan, tree_records,
)
from stratabench.systems.treestore.schema import SchemaNode
from stratabench.systems.treestore.tree import Inner

__all__ = ["RedisBackend"]

DRAIN = 10_000
"""Replies are drained every this many pipelined commands, as sysrepo's plugin does."""

_FIELDS = ("d", "n", "y", "v", "o")


def _mapping(record: NodeRecord, order: int | None) -> dict[str, Any]:
    fields = {"s": record.sort_key, "d": record.depth, "n": record.name, "k": record.kind, "f": 0}
    for name, value in (("m", record.module), ("y", record.keys), ("v", record.value), ("u", record.uo_parent),
                        ("r", record.uo_prev), ("g", record.origin), ("o", order)):
        if value is not None:
            fields[name] = value
    return fields


class _Pipeline:
    """A pipeline that executes every :data:`DRAIN` commands."""

    def __init__(self, client: Any) -> None:
        self.pipe = client.pipeline(transaction=False)
        self.count = 0
        self.replies: list[Any] = []

    def add(self) -> Any:
        self.count += 1
        if self.count % DRAIN == 0:
            self.replies.extend(self.pipe.execute())
        return self.pipe

    def finish(self) -> list[Any]:
        self.replies.extend(self.pipe.execute())
        return self.replies


class _Positions:
    """The position primitives of :mod:`..user_order` as single Redis commands."""

    def __init__(self, client: Any, ns: str) -> None:
        self.client, self.ns = client, ns

    def max_order(self, uo_parent: str) -> int | None:
        value = self.client.get(f"{self.ns}:meta:{uo_parent}")
        return None if value is None else int(value)

    def set_max(self, uo_parent: str, order: int) -> None:
        self.client.set(f"{self.ns}:meta:{uo_parent}", order)

    def order_of(self, path: str) -> int:
        return int(self.client.hget(f"{self.ns}:data:{path}", "o"))

    def prev_of(self, path: str) -> str:
        return str(self.client.hget(f"{self.ns}:data:{path}", "r") or "")

    def successor(self, uo_parent: str, prev: str) -> tuple[str, int] | None:
        path = self.client.hget(f"{self.ns}:next:{uo_parent}", prev)
        return None if path is None else (path, self.order_of(path))

    def set_order(self, path: str, order: int) -> None:
        self.client.hset(f"{self.ns}:data:{path}", "o", order)

    def set_prev(self, path: str, prev: str) -> None:
        uo_parent = self.client.hget(f"{self.ns}:data:{path}", "u")
        self.client.hset(f"{self.ns}:data:{path}", "r", prev)
        self.client.hset(f"{self.ns}:next:{uo_parent}", prev, path)

    def insert(self, record: NodeRecord, order: int) -> None:
        ns = self.ns
        self.client.hset(f"{ns}:data:{record.path}", mapping=_mapping(record, order))
        self.client.zadd(f"{ns}:idx", {f"{record.sort_key}\x00{record.path}": 0})
        self.client.hset(f"{ns}:next:{record.uo_parent}", record.uo_prev, record.path)

    def forget(self, path: str, uo_parent: str) -> None:
        """Drop a deleted instance from its list's successor index."""
        own = path[len(uo_parent):]
        prev = self.prev_of(path)
        self.client.hdel(f"{self.ns}:next:{uo_parent}", own)
        if self.client.hget(f"{self.ns}:next:{uo_parent}", prev) == path:
            self.client.hdel(f"{self.ns}:next:{uo_parent}", prev)


@TREE_BACKENDS.register("redis", requires=("redis",), extra="stores")
class RedisBackend(TreeBackend):
    """One hash per node in Redis (core commands: a sorted-set index), diffs through a pipeline."""

    service = "redis"

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        import redis

        return (redis.RedisError, OSError)

    @property
    def prefix(self) -> str:
        return f"sbts:{self.namespace}"

    def _ns(self, module: SchemaNode, ds: str, owner: Owner | None) -> str:
        base = f"{self.prefix}:{ds}:{module.name}"
        return base if owner is None else f"{base}+{owner[0]}+{owner[1]}"

    def _client(self) -> Any:
        import redis

        if not self.url:
            raise UnavailableError(f"{self.name}: needs a Redis server; run with --services local or --store redis://HOST:PORT/DB")
        client = redis.Redis.from_url(self.url, decode_responses=True, socket_connect_timeout=5, socket_timeout=30)
        client.ping()
        return client

    def _open(self) -> None:
        with self.guard("connect"):
            self._admin = self._client()
            self.server_version = str(self._admin.info("server").get("redis_version", "unknown"))

    def connect(self) -> Any:
        with self.guard("connect"):
            return self._client()

    def disconnect(self, conn: Any) -> None:
        conn.close()

    def _scan_delete(self, client: Any, pattern: str) -> None:
        batch: list[str] = []
        for key in client.scan_iter(match=pattern, count=1000):
            batch.append(key)
            if len(batch) >= 1000:
                client.unlink(*batch)
                batch.clear()
        if batch:
            client.unlink(*batch)

    def install(self, module: SchemaNode, ds: str, access: Access) -> None:
        ns = self._ns(module, ds, None)
        with self.guard("install"):
            self._admin.mset({f"{ns}:perm:owner": access.uid, f"{ns}:perm:group": access.gid,
                              f"{ns}:perm:perm": access.mode})

    def uninstall(self, module: SchemaNode, ds: str) -> None:
        ns = self._ns(module, ds, None)
        with self.guard("uninstall"):
            self._scan_delete(self._admin, f"{ns}:*")
            self._scan_delete(self._admin, f"{ns}+*")

    def load(self, conn: Any, module: SchemaNode, ds: str, owner: Owner | None,
             scopes: list[Scope] | None) -> Inner | None:
        ns = self._ns(module, ds, owner)
        with self.guard("load"):
            if scopes is None:
                members = conn.zrange(f"{ns}:idx", 0, -1)
            else:
                members = self._scoped_members(conn, ns, scopes)
            pipeline = _Pipeline(conn)
            for member in members:
                pipeline.add().hmget(f"{ns}:data:{member.partition(chr(0))[2]}", _FIELDS)
            rows = pipeline.finish()
        builder = TreeBuilder(module)
        builder.add_rows((int(d), n, y, v, None if o is None else int(o)) for d, n, y, v, o in rows if d is not None)
        return builder.finish()

    def _scoped_members(self, conn: Any, ns: str, scopes: list[Scope]) -> list[str]:
        pipe = conn.pipeline(transaction=False)
        ancestors = sorted({path for scope in scopes for path in scope.ancestors})
        for path in ancestors:
            pipe.hget(f"{ns}:data:{path}", "s")
        for scope in scopes:
            pipe.zrangebylex(f"{ns}:idx", f"[{scope.sort_prefix}", f"({scope.sort_prefix[:-1]}{chr(ord(scope.sort_prefix[-1]) + 1)}")
        replies = pipe.execute()
        members = {f"{sort}\x00{path}" for path, sort in zip(ancestors, replies) if sort is not None}
        for found in replies[len(ancestors):]:
            members.update(found)
        return sorted(members)

    def store_prepare(self, conn: Any, module: SchemaNode, ds: str, owner: Owner | None,
                      diff: Diff | None, tree: Inner | None, origin: str | None) -> None:
        """Nothing: the sysrepo plugin writes everything in its commit."""

    def store_commit(self, conn: Any, module: SchemaNode, ds: str, owner: Owner | None,
                     diff: Diff | None, tree: Inner | None, origin: str | None) -> None:
        ns = self._ns(module, ds, owner)
        with self.guard("store"):
            if tree is None and owner is not None:
                self._scan_delete(conn, f"{ns}:*")
                return
            if diff is None:
                self._replace(conn, ns, tree, origin)
            else:
                self._apply(conn, ns, diff, origin)
            now = time.time_ns()
            conn.mset({f"{ns}:glob:last-modified-sec": now // 1_000_000_000,
                       f"{ns}:glob:last-modified-nsec": now % 1_000_000_000})

    def _replace(self, conn: Any, ns: str, tree: Inner | None, origin: str | None) -> None:
        for pattern in ("data", "meta", "next"):
            self._scan_delete(conn, f"{ns}:{pattern}:*")
        conn.unlink(f"{ns}:idx")
        pipeline = _Pipeline(conn)
        orders: dict[str, int] = {}
        for record in tree_records(tree, origin):
            order = None
            if record.uo_parent is not None:
                order = orders[record.uo_parent] = orders.get(record.uo_parent, 0) + UO_GAP
                pipeline.add().hset(f"{ns}:next:{record.uo_parent}", record.uo_prev, record.path)
            self._write(pipeline, ns, record, order)
        for parent, top in orders.items():
            pipeline.add().set(f"{ns}:meta:{parent}", top)
        pipeline.finish()

    @staticmethod
    def _write(pipeline: _Pipeline, ns: str, record: NodeRecord, order: int | None) -> None:
        pipeline.add().hset(f"{ns}:data:{record.path}", mapping=_mapping(record, order))
        pipeline.add().zadd(f"{ns}:idx", {f"{record.sort_key}\x00{record.path}": 0})

    def _delete_subtree(self, pipeline: _Pipeline, ns: str, deleted: Deleted) -> None:
        for record in deleted.records():
            pipeline.add().delete(f"{ns}:data:{record.path}")
            pipeline.add().zrem(f"{ns}:idx", f"{record.sort_key}\x00{record.path}")
            if record.uo_parent is not None and record.path != deleted.path:
                pipeline.add().delete(f"{ns}:meta:{record.uo_parent}", f"{ns}:next:{record.uo_parent}")

    def _apply(self, conn: Any, ns: str, diff: Diff, origin: str | None) -> None:
        plan = store_plan(diff, origin)
        positions = _Positions(conn, ns)
        # Pass 1: user-ordered operations, one command at a time.
        for deleted in plan.uo_deletes:
            user_order.unlink(positions, deleted.path, deleted.uo_parent)
            positions.forget(deleted.path, deleted.uo_parent)
        for record in plan.uo_creates:
            user_order.place(positions, record)
        # Pass 2: everything else through one pipeline.
        pipeline = _Pipeline(conn)
        for deleted in (*plan.uo_deletes, *plan.deletes):
            self._delete_subtree(pipeline, ns, deleted)
        for path, value in plan.replaces:
            pipeline.add().hset(f"{ns}:data:{path}", mapping={"v": value, "f": 0})
        for record in plan.creates:
            self._write(pipeline, ns, record, None)
        pipeline.finish()

    def access(self, conn: Any, module: SchemaNode, ds: str) -> tuple[bool, bool]:
        ns = self._ns(module, ds, None)
        with self.guard("read its permission keys"):
            pipe = conn.pipeline(transaction=False)
            for name in ("owner", "group", "perm"):
                pipe.get(f"{ns}:perm:{name}")
            uid, gid, mode = pipe.execute()
        if uid is None:
            return False, False
        return permitted(int(uid), int(gid), int(mode))

    def last_modified(self, conn: Any, module: SchemaNode, ds: str) -> int | None:
        ns = self._ns(module, ds, None)
        with self.guard("read last-modified"):
            sec, nsec = conn.mget(f"{ns}:glob:last-modified-sec", f"{ns}:glob:last-modified-nsec")
        return None if sec is None else int(sec) * 1_000_000_000 + int(nsec)

    def owners(self, conn: Any, module: SchemaNode) -> list[Owner]:
        base = f"{self._ns(module, OPERATIONAL, None)}+"
        found = set()
        with self.guard("list owners"):
            for key in conn.scan_iter(match=f"{base}*:idx", count=1000):
                cid, sid = key[len(base):].split(":", 1)[0].split("+")
                found.add((int(cid), int(sid)))
        return sorted(found)

    def cleanup(self) -> None:
        with self.guard("clean up"):
            try:
                self._scan_delete(self._admin, f"{self.prefix}:*")
            finally:
                self._admin.close()

    def header(self) -> dict[str, Any]:
        return {**super().header(), "redis_layout": "redis (core commands: sorted-set index)",
                "server_version": self.server_version}
