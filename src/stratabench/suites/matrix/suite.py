"""The matrix suite: any records × codecs × compressors × stores × operations.

How a user asks "which of these is fastest for my records on my servers?":

    stratabench run matrix --data my.jsonl --codec orjson --codec msgpack \\
        --compressor zstd --store redis://127.0.0.1:6379/0

- **Records:** the user's JSON Lines or CSV file (``--data``, read by
  :mod:`stratabench.datasets.userfile`, never written), or a registered
  dataset (``--set matrix.dataset=comments``); ``--size N`` keeps the first
  N records.
- **Codecs** (``--codec``), **compressors** (``--compressor``) and
  **stores**: by default every one available here that fits (:func:`left_out`
  says which were not, and why): the embedded stores (memory, SQLite, LMDB,
  files) in the cell's directory, plus every ``--store`` URL. Server stores
  need a URL (``--store``) or ``--services local``.
- **Operations,** each on every record, one record per key:
  ``put`` (encode, compress and store all records, in one batch where the
  store batches), ``get_one`` (read and decode one record, cycling through
  the keys), ``get_many`` (read and decode all, in one batch where the store
  batches), ``delete`` (remove all; the records are put back, untimed,
  before each). A write's figure is the write's own: a store whose commits
  now and then run its upkeep (SQLite's WAL checkpoint) runs it between
  samples, untimed (``Operation.before_sample``), as the cache study's
  writes do (docs/studies/cache.md §4).

Every cell is verified against the canonical hash of the records: reads by
what they return (``get_one`` by reading every record back through the same
path), ``put`` by reading back what it stored, ``delete`` by finding none of
the keys left. Keys live in a namespace of the run's own and are deleted
when the cell ends. Setting ``matrix.operations`` picks a subset
(``stratabench list settings`` shows the settings).

It does not run by default: it needs records.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from stratabench.datasets.schema import Row, Schema
from stratabench.datasets.verify import Integrity, first_difference, verify_rows
from stratabench.engine.operation import CellSpec, Operation
from stratabench.errors import StoreError, StratabenchError, UsageError
from stratabench.layers.stores.base import batch_getter, batch_putter, upkeep_apart
from stratabench.settings import Setting
from stratabench.suites import SUITES
from stratabench.suites.kit.stores import RunStore, real_url, run_stores
from stratabench.layers.stores.namespaces import cell_namespace
from stratabench.suites.kit.suite import Suite

__all__ = ["OPERATIONS", "MatrixSuite", "Records", "default_layers", "left_out", "load"]

OPERATIONS = ("put", "get_one", "get_many", "delete")


def default_layers(schema: Schema | None = None) -> tuple[list[str], list[str], list[str]]:
    """Every codec, compressor and embedded store that can run here (and, given a schema, represent it)."""
    from stratabench.layers.codecs import CODECS
    from stratabench.layers.compressors import COMPRESSORS
    from stratabench.layers.stores import STORES

    codecs = [info.name for info in CODECS if _codec_problem(info, schema) is None]
    compressors = [info.name for info in COMPRESSORS if info.availability.ok]
    stores = [info.name for info in STORES if info.availability.ok and not getattr(info.cls, "service", None)]
    return codecs, compressors, stores


def _codec_problem(info: Any, schema: Schema | None) -> str | None:
    if not info.availability.ok:
        return str(info.availability.reason)
    if getattr(info.cls, "not_for_values", ""):
        return str(info.cls.not_for_values)
    unsupported = getattr(info.cls, "unsupported_types", {})
    for field in schema.fields if schema is not None else ():
        if field.type in unsupported:
            return f"field {field.name}: {unsupported[field.type]}"
    return None


def left_out(schema: Schema | None, used_stores: Sequence[str]) -> list[str]:
    """One line per codec, compressor or store the default matrix leaves out, and why."""
    from stratabench.layers.codecs import CODECS
    from stratabench.layers.compressors import COMPRESSORS
    from stratabench.layers.stores import STORES

    lines = [f"codec {info.name}: {problem}" for info in CODECS
             if (problem := _codec_problem(info, schema)) is not None]
    lines += [f"compressor {info.name}: {info.availability.reason}" for info in COMPRESSORS if not info.availability.ok]
    for info in STORES:
        if info.name in used_stores:
            continue
        service = getattr(info.cls, "service", None)
        why = (f"needs a server: --services local, or --store URL" if service and info.availability.ok
               else str(info.availability.reason))
        lines.append(f"store {info.name}: {why}")
    return lines


@dataclass(frozen=True)
class Records:
    """The records a matrix run measures.

    Attributes
    ----------
    source
        ``the file name`` or ``dataset NAME``, for titles.
    schema
        The records' schema.
    rows
        The records, in order.
    hash_rows
        Their canonical hash function.
    """

    source: str
    schema: Schema
    rows: list[Row]
    hash_rows: Callable[[Sequence[Row]], str]


def load(data: str, size: int | None, seed: int | None) -> Records:
    """The records of ``data``: ``dataset:NAME`` or a file path; the first ``size`` of them.

    Raises
    ------
    DataError
        For a malformed file (with its line).
    UnknownNameError
        For an unknown dataset name.
    """
    if data.startswith("dataset:"):
        from stratabench.datasets import DATASETS

        name = data.removeprefix("dataset:")
        entry = DATASETS.get(name)()
        rows = entry.rows(size or entry.default_size, entry.default_seed if seed is None else seed)
        return Records(f"dataset {name}", entry.schema, list(rows), entry.canonical_hash)
    from stratabench.datasets.userfile import load_records

    records = load_records(data)
    rows = records.rows[:size] if size else records.rows
    return Records(Path(data).name, records.schema, rows, records.canonical_hash)


def _quietly(*steps: Callable[[], None]) -> None:
    for step in steps:
        try:
            step()
        except StratabenchError:
            pass  # a server that died cannot be cleaned; its data died with it


@SUITES.register("matrix")
class MatrixSuite(Suite):
    """Your records × codecs × compressors × stores: put, get one, get many, delete."""

    default = False
    settings = (
        Setting("matrix.dataset", "", "a registered dataset instead of --data, e.g. comments or bulkload"),
        Setting("matrix.operations", "", f"operations; default all: {','.join(OPERATIONS)}", "list"),
        Setting("matrix.stores", "", "embedded stores; default every one available here (memory, sqlite, lmdb, "
                "file); --store URLs are added", "list"),
        Setting("matrix.calibration_slowdown", "0", "FOR CALIBRATING compare ONLY: make each timed call this "
                "fraction slower (0.1: 10%) by spinning after it, so a known slowdown can be injected; never set "
                "it in a real measurement", "number", minimum=0, maximum=10),
        Setting("matrix.calibration_operations", "", "the operations calibration_slowdown slows; default all",
                "list"),
    )

    def sized_datasets(self) -> tuple[str, ...]:
        # A user's file is bounded by its own length: --size keeps its first records.
        name = self.config.text("matrix.dataset")
        return (name,) if name else ()

    def _data(self) -> str:
        name = self.config.text("matrix.dataset")
        if name:
            return f"dataset:{name}"
        if self.options.data:
            return str(Path(self.options.data).resolve())
        raise UsageError("the matrix suite needs records: --data FILE (JSON Lines or CSV) or --set matrix.dataset=NAME")

    def _stores(self) -> list[RunStore]:
        """The chosen embedded stores (default: every one available here), then the run's ``--store`` URLs."""
        embedded = default_layers()[2]
        chosen = self.config.items("matrix.stores")
        unknown = [name for name in chosen if name not in embedded]
        if unknown:
            raise UsageError(f"matrix.stores: {', '.join(unknown)} is no embedded store available here; use "
                             f"{', '.join(embedded)}, or a server's URL with --store")
        return run_stores(self.options, embedded=chosen or embedded)

    def cells(self) -> list[CellSpec]:
        from stratabench.layers.codecs import CODECS
        from stratabench.layers.compressors import COMPRESSORS

        data = self._data()
        records = load(data, self.options.size, self.options.seed)  # a malformed file stops the run here
        codecs_here, compressors_here, _ = default_layers(records.schema)
        codecs = list(self.options.codecs or codecs_here)
        compressions = list(self.options.compressors or compressors_here)
        for name in codecs:
            CODECS.info(name)
        for name in compressions:
            COMPRESSORS.info(name)
        wanted = self.config.items("matrix.operations")
        unknown = [name for name in wanted if name not in OPERATIONS]
        if unknown:
            raise UsageError(f"matrix.operations: unknown {', '.join(unknown)}; use {', '.join(OPERATIONS)}")
        operations = [name for name in OPERATIONS if not wanted or name in wanted]
        cells = []
        for store in self._stores():
            label, kind, url = store.label, store.kind, store.url
            for codec in codecs:
                for compression in compressions:
                    for operation in operations:
                        params = {"data": data, "records": len(records.rows), "size": self.options.size,
                                  "seed": self.options.seed, "store": label, "kind": kind, "url": url,
                                  "codec": codec, "compression": compression, "operation": operation}
                        cells.append(self.spec(f"{operation} {label} {codec}+{compression}", params))
        return cells

    def prepare(self, cell: CellSpec, workdir: Path) -> Operation:
        from stratabench.layers.stores import open_store
        from stratabench.layers.stores.base import BatchStore
        from stratabench.layers.value_pipeline import make_pipeline

        p = cell.params
        records = load(p["data"], p["size"], p["seed"])
        rows, schema = records.rows, records.schema
        expected = records.hash_rows(rows)
        pipeline = make_pipeline(p["codec"], p["compression"], schema, self.options, workdir)
        from stratabench.layers.stores import STORES

        url = real_url(self.options, p["url"]) if p["url"] else STORES.get(p["kind"]).scratch_url(workdir)
        if url is None:
            raise UsageError(f"store {p['kind']} needs a server: pass its URL with --store")
        store = open_store(url, namespace=cell_namespace(self.options, "matrix", cell.name), options=self.options)
        try:
            operation = _operation(p["operation"], store, pipeline.dumps, pipeline.loads, rows, schema,
                                   records.hash_rows, expected)
        except BaseException:
            _quietly(store.cleanup, store.close)
            raise
        slowdown = self.config.number("matrix.calibration_slowdown")
        slowed = self.config.items("matrix.calibration_operations")
        if slowdown and (not slowed or p["operation"] in slowed):
            operation.call = _slowed(operation.call, slowdown)
            operation.notes["calibration_slowdown"] = slowdown
        operation.notes.update(pipeline.notes)
        operation.notes.update(records=len(rows), store=store.name, batched=isinstance(store, BatchStore))
        return operation


def _slowed(call: Callable[[], object], fraction: float) -> Callable[[], object]:
    """``call``, then a busy wait of ``fraction`` of the CPU time it took: ``1 + fraction`` times its cost.

    A relative cost rather than a fixed one, so the true ratio is known for
    every cell whatever its speed. It is measured and spent in this thread's
    CPU time, not wall time: on a loaded machine a wall-clock wait ends early
    whenever the scheduler takes the CPU away, so the slowdown would not be
    the one asked for; CPU work is stretched by load as the operation's own
    work is. Meant for operations of a millisecond or more (the clock's own
    reads cost a fraction of a microsecond).
    """
    clock = time.thread_time_ns

    def slowed() -> object:
        start = clock()
        result = call()
        end = clock()
        until = end + int((end - start) * fraction)
        while clock() < until:
            pass
        return result

    return slowed


def _operation(name: str, store: Any, dumps: Callable[[Sequence[Row]], bytes], loads: Callable[[bytes], list[Row]],
               rows: list[Row], schema: Schema, hash_rows: Callable[[Sequence[Row]], str], expected: str) -> Operation:
    """The operation ``name`` on one record per key in ``store``; stores every record first."""
    keys = [f"r{index:09d}".encode() for index in range(len(rows))]
    get, delete = store.get, store.delete
    get_many, put_many = batch_getter(store), batch_putter(store)
    where = f"{store.name} at {store.address}"

    def put_all() -> None:
        put_many((key, dumps([row])) for key, row in zip(keys, rows))

    def fetch(datas: Sequence[bytes | None]) -> list[Row]:
        out: list[Row] = []
        for data in datas:
            if data is None:
                raise StoreError(f"miss: {where} returned nothing for a record this cell stored")
            out += loads(data)
        return out

    def get_all() -> list[Row]:
        return fetch(get_many(keys))

    def read_back_one_by_one() -> list[Row]:
        return fetch([get(key) for key in keys])

    difference = partial(first_difference, schema)

    def check(found: Sequence[Row], want: str = expected, want_rows: Sequence[Row] = rows) -> Integrity:
        return verify_rows(found, expected_hash=want, hash_rows=hash_rows, expected_rows=lambda: want_rows,
                           difference=difference)

    put_all()
    stored = sum(len(dumps([row])) for row in rows)
    before_each: Callable[[], None] | None = None
    if name == "put":
        call: Callable[[], object] = put_all

        def verify(result: object) -> Integrity:
            return check(read_back_one_by_one())
    elif name == "get_one":
        cursor = itertools.cycle(keys)

        def call() -> object:
            data = get(next(cursor))
            if data is None:
                raise StoreError(f"miss: {where} returned nothing for a record this cell stored")
            return loads(data)

        def verify(result: object) -> Integrity:
            return check(read_back_one_by_one())
    elif name == "get_many":
        call = get_all

        def verify(result: object) -> Integrity:
            return check(result)  # type: ignore[arg-type]
    elif name == "delete":
        def call() -> object:
            for key in keys:
                delete(key)
            return None

        before_each = put_all
        empty = hash_rows([])

        def verify(result: object) -> Integrity:
            left = fetch([data for data in (get(key) for key in keys) if data is not None])
            return check(left, empty, [])
    else:
        raise UsageError(f"unknown matrix operation {name!r}; use {', '.join(OPERATIONS)}")
    # A write's figure is the write's own: a store whose commits now and then run its upkeep (SQLite's WAL
    # checkpoint) runs it between samples, untimed, as the cache study's writes do (docs/studies/cache.md §4).
    upkeep = upkeep_apart(store) if name in ("put", "delete") else None
    # Only the memory store keeps the work in this thread; every other one waits on a file or a server.
    return Operation(call=call, verify=verify, size_bytes=stored, server_pids=store.server_pids,
                     waits=store.name != "memory", before_each=before_each, before_sample=upkeep,
                     close=lambda: _quietly(store.cleanup, store.close),
                     notes={"operation_covers": "one record" if name == "get_one" else f"{len(rows)} records"})
