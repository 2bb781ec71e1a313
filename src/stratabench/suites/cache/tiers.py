"""How a cache-suite cell reads and writes its entry, in each representation.

Three representations, each giving a :class:`TierAccess` (the timed read
and write, the size stored, the server's pids, the clean-up):

- :func:`ready_access`: the Python records themselves, kept by reference in
  a dict (the study's "instance memory": no copy, no serialization);
- :func:`value_access`: one encoded, compressed value under one key of a
  store plugin (memory, memcached, Redis, or the ``blob`` key/value table
  of a database): the whole list of comments is **one** entry, as the study
  cached the query result, not each comment;
- :func:`rows_access`: one row per record in a database table, read by a
  real query (:mod:`stratabench.layers.stores.rows`).

A read that finds nothing is a :class:`~stratabench.errors.StoreError`
(a miss must never pass for a fast read).

A tier whose writes now and then run its store's upkeep (SQLite's WAL
checkpoint) hands the suite :attr:`TierAccess.defer_upkeep`: a write cell
takes the upkeep out of its writes and runs it between samples
(docs/studies/cache.md §4).
"""

from __future__ import annotations

import pickle
import sys
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from stratabench.datasets.schema import Row
from stratabench.errors import StoreError, StratabenchError
from stratabench.layers.stores.base import ItemLimit, Store, upkeep_apart
from stratabench.layers.stores.rows import RowTable
from stratabench.layers.value_pipeline import ValuePipeline

__all__ = ["TierAccess", "footprint_bytes", "ready_access", "rows_access", "value_access"]


@dataclass
class TierAccess:
    """One cell's entry in its tier.

    Attributes
    ----------
    read
        The timed get: fetch the entry and hand back usable records.
    write
        The timed set: make the entry from the records and store it.
    size_bytes
        Bytes stored for the entry (encoded and compressed; for rows, the
        sum of the rows' payloads); ``None`` for objects kept by reference.
    server_pids
        Process ids of the local server, when known.
    close
        Deletes what the cell stored and releases connections; never raises.
    stages
        Untimed-by-the-cell parts of ``read`` to time on their own
        (``decompress_ns``, ``decode_ns``), by metric name.
    footprint_bytes
        For the memory tier: what the process holds for the entry.
    notes
        Facts to keep with the result.
    defer_upkeep
        For a store with periodic upkeep inside its writes
        (:class:`~stratabench.layers.stores.base.DeferredUpkeep`): stops it
        there and returns the call that runs it; for every other tier it
        returns ``None``.
    """

    read: Callable[[], list[Row]]
    write: Callable[[], None]
    size_bytes: int | None
    server_pids: tuple[int, ...]
    close: Callable[[], None]
    stages: dict[str, Callable[[], object]] = field(default_factory=dict)
    footprint_bytes: int | None = None
    notes: dict[str, Any] = field(default_factory=dict)
    defer_upkeep: Callable[[], Callable[[], None] | None] = lambda: None


def _miss(where: str) -> StoreError:
    return StoreError(f"cache miss: {where} returned nothing for the entry this cell stored; "
                      "the server evicted it or lost it (check its memory limit)")


def footprint_bytes(build: Callable[[], object]) -> int:
    """Bytes that stay allocated for what ``build`` returns (tracemalloc, outside any timing)."""
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        kept = build()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del kept
    return max(0, after - before)


def ready_access(records: list[Row]) -> TierAccess:
    """The records kept by reference in a dict: a get hands back the very objects."""
    cache: dict[str, list[Row]] = {}
    key = "entry"

    def write() -> None:
        cache[key] = records

    def read() -> list[Row]:
        value = cache.get(key)
        if value is None:
            raise _miss("the in-process dict")
        return value

    write()
    # What the instance holds: a private copy of the records, built from
    # scratch so that nothing is shared with the generator's caches.
    held = footprint_bytes(lambda: pickle.loads(pickle.dumps(records, pickle.HIGHEST_PROTOCOL)))
    return TierAccess(read=read, write=write, size_bytes=None, server_pids=(), close=cache.clear,
                      footprint_bytes=held, notes={"encoding": "ready (objects by reference)"})


def _quietly(*steps: Callable[[], None]) -> Callable[[], None]:
    def run() -> None:
        for step in steps:
            try:
                step()
            except StratabenchError:
                pass  # a server that died cannot be cleaned; its data died with it

    return run


def value_access(store: Store, pipeline: ValuePipeline, records: list[Row], key: bytes, *,
                 in_process: bool = False, value: bytes | None = None) -> TierAccess:
    """One encoded, compressed entry under ``key`` in ``store``.

    Stores the entry once (so a get hits, and so a value over the store's
    item limit fails here, as ``unsupported``). ``in_process`` marks the
    memory tier, whose entry's footprint is measured. ``value`` is the
    entry's bytes when the caller has them (``pipeline.dumps(records)``,
    made once for the run); without it they are encoded here.
    """
    get, put, dumps, loads = store.get, store.put, pipeline.dumps, pipeline.loads
    if value is None:
        value = dumps(records)
    where = f"{store.name} at {store.address}"

    def write() -> None:
        put(key, dumps(records))

    def read() -> list[Row]:
        data = get(key)
        if data is None:
            raise _miss(where)
        return loads(data)

    put(key, value)
    decompress = pipeline.compressor.decompress
    decode, to_rows = pipeline.format.decode, pipeline.format.to_rows
    plain = decompress(value)
    stages: dict[str, Callable[[], object]] = {"decode_ns": lambda: to_rows(decode(plain))}
    if pipeline.compressor.name != "none":
        stages["decompress_ns"] = lambda: decompress(value)
    notes = dict(pipeline.notes)
    if isinstance(store, ItemLimit):
        notes["item_limit_bytes"] = store.item_limit_bytes
    return TierAccess(
        read=read, write=write, size_bytes=len(value), server_pids=store.server_pids,
        close=_quietly(store.cleanup, store.close), stages=stages,
        footprint_bytes=sys.getsizeof(value) if in_process else None, notes=notes,
        defer_upkeep=partial(upkeep_apart, store),
    )


def rows_access(table: RowTable, records: list[Row], *, single: bool) -> TierAccess:
    """Records as rows of ``table``: ``single`` reads one by primary key, else the first ``len(records)``."""
    one, first = table.reader()
    count = len(records)
    key = records[0][0]
    where = f"the {table.name} table {table.table}"

    def write() -> None:
        table.write(records)

    if single:
        def read() -> list[Row]:
            found = one(key)
            if not found:
                raise _miss(where)
            return found
    else:
        def read() -> list[Row]:
            found = first(count)
            if len(found) != count:
                raise _miss(f"{where} ({len(found)} of {count} rows)")
            return found

    write()
    notes = {"encoding": "rows", "table": table.table, "query": table.select_one_sql if single else table.select_all_sql}
    return TierAccess(read=read, write=write, size_bytes=table.payload(records), server_pids=table.server_pids,
                      close=_quietly(table.cleanup, table.close), notes=notes,
                      defer_upkeep=partial(upkeep_apart, table))
