"""The cache suite: instance memory vs memcached vs Redis vs the database (docs/studies/cache.md).

Reproduces a 2011 App Engine article on caching as a matrix on real local
parts: tiers × encodings × compressions × datasets × operations, then says
which of the article's findings still hold.

- **Tiers:** ``memory`` (in-process) and ``sqlite`` always; ``memcached``,
  ``redis``, ``postgresql`` and ``mariadb`` for each ``--store`` URL of that
  kind (``--services local`` starts them all). Other stores (file, LMDB,
  MongoDB) are the matrix suite's business and are left out here.
- **Encodings:** ``ready`` (memory only: the objects by reference), the
  codecs ``pickle``, ``protobuf`` and ``msgpack`` (or those of ``--codec``),
  and on the database tiers ``rows`` (one row per record, read by a real
  query) beside ``blob`` (the encoded value in a key/value table of the
  same database).
- **Compressions:** ``none``, ``zlib`` (level 6), ``zstd`` (3), ``lz4``
  (or those of ``--compressor``); none with ``ready`` or ``rows``.
- **Datasets:** ``article`` (one 60 KB record) and ``comments`` (1,000
  records, ``--size`` changes the count), seeded with ``--seed``.
- **Operations:** ``get_one``/``set_one`` on the article, ``get_list``/
  ``set_list`` on the comments. A get hands back usable records (the same
  tuples, with ``datetime`` values, on every path) and is checked against
  the dataset's hash; a set is checked by reading the entry back.
- **A write's figure is the write's own.** A store whose commits now and
  then run its upkeep (SQLite's WAL checkpoint, every 1,000 pages of log:
  one write in 59 to 91 of the article) runs it before each sample,
  untimed, and never inside a write (``Operation.before_sample``): left in
  the writes, it fell inside every sample or none as the calibrated loop
  count fell, and ``set_one sqlite blob:protobuf+lz4`` read 184 or 248 µs
  in two runs of the same code (docs/studies/cache.md §4).

A cell's store keys and tables live in a namespace of the run's own and are
deleted when the cell ends. A value over a tier's item limit (memcached's
1 MB) is reported ``unsupported``; an unreachable or dead server fails only
its cells, with one line.

Settings (``cache.*``: subsets of tiers and operations, and a calibration
target below ``--min-time`` because the suite has many cheap cells):
``stratabench list settings`` shows them with their defaults.
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from stratabench.datasets import article, comments
from stratabench.datasets.schema import Row, Schema
from stratabench.datasets.verify import Integrity, first_difference, verify_rows
from stratabench.engine.operation import CellSpec, Operation
from stratabench.errors import UsageError
from stratabench.options import EngineOptions
from stratabench.run_shared import made_once
from stratabench.settings import Setting
from stratabench.suites import SUITES
from stratabench.suites.kit.stores import RunStore, real_url, run_stores
from stratabench.layers.stores.namespaces import cell_namespace
from stratabench.suites.kit.suite import Suite, min_time_setting

__all__ = ["CacheSuite", "DEFAULT_MIN_SAMPLE_NS", "DEFAULT_COMPRESSIONS", "DEFAULT_ENCODINGS", "OPERATIONS", "TIER_KINDS"]

DEFAULT_ENCODINGS = ("pickle", "protobuf", "msgpack")
DEFAULT_COMPRESSIONS = ("none", "zlib", "zstd", "lz4")
#: Operation → the dataset it works on.
OPERATIONS = {"get_one": "article", "get_list": "comments", "set_one": "article", "set_list": "comments"}
#: The kinds of tier (the server, or the plugin of an embedded store: :func:`run_stores`), in the order tables list them.
TIER_KINDS = ("memory", "sqlite", "memcached", "redis", "postgresql", "mariadb")
DATABASES = ("sqlite", "postgresql", "mariadb")
#: The calibration target the suite uses unless told otherwise (see the module docstring): 10 ms, as entities'.
#: A run's rounds give the spread (one sample a round), so a longer sample bought little: ``run cache`` with 20 ms
#: and 10 ms, alternated twice under the lock (load 0.6-1.2), took 54.6/55.2 s against 44.2/44.3 s and flagged
#: 10 and 6 of 104 cells against 13 and 11.
DEFAULT_MIN_SAMPLE_NS = 10_000_000
_STAGE_ENGINE = EngineOptions(samples=3, warmups=0, min_sample_ns=5_000_000, memory_samples=0, isolate=False)


@functools.lru_cache(maxsize=None)
def _dataset(name: str, size: int, seed: int) -> tuple[Schema, list[Row], Callable[[Sequence[Row]], str], str]:
    """The dataset's schema, rows, hash function and hash; built once a process (the zygote's, see ``warm``)."""
    module = article if name == "article" else comments
    records = module.rows(size, seed)
    return module.SCHEMA, records, module.canonical_hash, module.canonical_hash(records)


@SUITES.register("cache")
class CacheSuite(Suite):
    """Instance memory vs memcached vs Redis vs the database (App Engine caching article, 2011)."""

    settings = (
        Setting("cache.tiers", "", "tiers (labels or kinds); default every tier of the run", "list"),
        Setting("cache.operations", "", f"operations; default all: {','.join(OPERATIONS)}", "list"),
        min_time_setting("cache", DEFAULT_MIN_SAMPLE_NS),
    )

    def sized_datasets(self) -> tuple[str, ...]:
        return ("comments",)

    @classmethod
    def warm(cls) -> None:
        # The default run's two datasets and their hashes: every cell starts from one (30 ms each to hash).
        _dataset("article", 1, article.DEFAULT_SEED)
        _dataset("comments", comments.DEFAULT_SIZE, article.DEFAULT_SEED)

    @property
    def list_size(self) -> int:
        return self.options.size or comments.DEFAULT_SIZE

    @property
    def seed(self) -> int:
        return article.DEFAULT_SEED if self.options.seed is None else self.options.seed

    def tiers(self) -> list[RunStore]:
        """The embedded tiers (``memory://``, an SQLite file in the cell's directory), then the run's servers."""
        tiers = [tier for tier in run_stores(self.options, embedded=("memory", "sqlite"), kind="server")
                 if tier.kind in TIER_KINDS]  # fmt: skip
        wanted = self.config.items("cache.tiers")
        if wanted:
            unknown = [name for name in wanted if name not in {t.label for t in tiers} | {t.kind for t in tiers}]
            if unknown:
                raise UsageError(f"cache.tiers: no tier {', '.join(unknown)} in this run; tiers: "
                                 f"{', '.join(t.label for t in tiers)} (servers come from --store or --services local)")
            tiers = [tier for tier in tiers if tier.label in wanted or tier.kind in wanted]
        return sorted(tiers, key=lambda tier: TIER_KINDS.index(tier.kind))

    def _encodings(self) -> list[str]:
        from stratabench.layers.codecs import CODECS

        names = list(self.options.codecs or DEFAULT_ENCODINGS)
        for name in names:
            CODECS.info(name)  # unknown names fail before anything is measured
        return names

    def _compressions(self) -> list[str]:
        from stratabench.layers.compressors import COMPRESSORS

        names = list(self.options.compressors or DEFAULT_COMPRESSIONS)
        for name in names:
            COMPRESSORS.info(name)
        return names

    def _operations(self) -> list[str]:
        wanted = self.config.items("cache.operations") or list(OPERATIONS)
        unknown = [name for name in wanted if name not in OPERATIONS]
        if unknown:
            raise UsageError(f"cache.operations: unknown {', '.join(unknown)}; use {', '.join(OPERATIONS)}")
        return [name for name in OPERATIONS if name in wanted]

    def cells(self) -> list[CellSpec]:
        encodings, compressions, operations = self._encodings(), self._compressions(), self._operations()
        cells = []
        for tier in self.tiers():
            variants: list[tuple[str, str, str]] = []  # (representation, encoding, compression)
            if tier.kind == "memory":
                variants.append(("ready", "ready", "none"))
            database = tier.kind in DATABASES
            if database:
                variants.append(("rows", "rows", "none"))
            representation = "blob" if database else "value"
            variants += [(representation, codec, compression) for codec in encodings for compression in compressions]
            for rep, encoding, compression in variants:
                for operation in operations:
                    dataset = OPERATIONS[operation]
                    size = 1 if dataset == "article" else self.list_size
                    shown = encoding if rep in ("ready", "rows") else f"{encoding}+{compression}"
                    if rep == "blob":
                        shown = f"blob:{shown}"
                    params = {"tier": tier.label, "kind": tier.kind, "url": tier.url, "representation": rep,
                              "encoding": encoding, "compression": compression, "operation": operation,
                              "dataset": dataset, "size": size, "seed": self.seed}
                    # The study compares tiers and encodings for one operation: measured back to back each round.
                    cells.append(self.spec(f"{operation} {tier.label} {shown}", params, group=operation))
        return cells

    # -- inside the worker ----------------------------------------------------------

    def prepare(self, cell: CellSpec, workdir: Path) -> Operation:
        from stratabench.engine.measure import measure_operation
        from stratabench.suites.cache.tiers import ready_access, rows_access, value_access

        params = cell.params
        schema, records, hash_rows, expected = _dataset(params["dataset"], params["size"], params["seed"])
        kind, rep = params["kind"], params["representation"]
        namespace = cell_namespace(self.options, "cache", cell.name)
        url = real_url(self.options, params["url"]) if params["url"] else None
        if rep == "ready":
            access = ready_access(records)
        elif rep == "rows":
            from stratabench.layers.stores.rows import open_row_table

            table = open_row_table(kind, url or f"sqlite://{workdir}/cache.db", schema, namespace=namespace,
                                   options=self.options)
            try:
                access = rows_access(table, records, single=params["dataset"] == "article")
            except BaseException:
                table.close()
                raise
        else:
            from stratabench.layers.stores import open_store
            from stratabench.layers.value_pipeline import make_pipeline

            pipeline = make_pipeline(params["encoding"], params["compression"], schema, self.options, workdir)
            # The entry's bytes are the same in every visit of every cell of this encoding, compression and
            # dataset (both tiers, gets and sets): the run's first visit makes them, the others read them back
            # (made_once), where each visit encoded its own: 0.4 s of every round, zlib's 1,000 comments 23 ms
            # a visit. A set's timed write still encodes, every call.
            value = made_once(f"cache-{params['encoding']}-{params['compression']}-{params['dataset']}-"
                              f"{params['size']}-{params['seed']}.bin", lambda: pipeline.dumps(records))
            default = "memory://" if kind == "memory" else f"sqlite://{workdir}/cache.db"
            store = open_store(url or default, namespace=namespace, options=self.options)
            try:
                access = value_access(store, pipeline, records, params["dataset"].encode(),
                                      in_process=kind == "memory", value=value)
            except BaseException:
                try:
                    store.cleanup()
                finally:
                    store.close()
                raise
        writes = params["operation"].startswith("set")
        try:
            access.read()  # the warm-up read: the entry must be there before timing
            extra: dict[str, float] = {}
            if access.footprint_bytes is not None:
                extra["retained_bytes"] = float(access.footprint_bytes)
            # A write's figure is the write's own: the store's upkeep (SQLite's WAL checkpoint) runs between
            # samples, never inside one (docs/studies/cache.md §4). Reads never run it.
            upkeep = access.defer_upkeep() if writes else None
        except BaseException:
            access.close()
            raise
        check = _checker(schema, records, hash_rows, expected)
        read = access.read
        if not writes:
            call: Callable[[], object] = read
            verify: Callable[[object], Integrity] = check
        else:
            call = access.write

            def verify(_: object) -> Integrity:
                return check(read())  # what the set stored, read back through the tier

        stages = {} if writes else access.stages

        def stage_split() -> dict[str, float]:
            # The stage split (docs/studies/cache.md §5): each part of the read timed on its own by the
            # engine, to show where a gain is lost; once, in the cell's first round.
            return {metric: statistics.median(measure_operation(Operation(call=stage, trace_memory=False),
                                                                _STAGE_ENGINE).samples["wall_ns"])
                    for metric, stage in stages.items()}

        notes: dict[str, Any] = {**access.notes, "dataset": params["dataset"], "records": len(records)}
        if upkeep is not None:
            notes["upkeep"] = "the store's WAL checkpoint before each sample, untimed (docs/studies/cache.md §4)"
        # A tier in this process's memory is CPU work, judged on the thread's CPU time; SQLite and the servers
        # wait on a file or another process, which is part of what the study measures: wall time.
        return Operation(call=call, verify=verify, size_bytes=access.size_bytes, extra=extra, extra_of=stage_split,
                         notes=notes,
                         server_pids=access.server_pids, before_sample=upkeep, close=access.close,
                         waits=kind != "memory",
                         engine=self.tuned_engine(DEFAULT_MIN_SAMPLE_NS))


def _checker(schema: Schema, records: list[Row], hash_rows: Callable[[Sequence[Row]], str],
             expected: str) -> Callable[[object], Integrity]:
    difference = partial(first_difference, schema)

    def check(result: object) -> Integrity:
        rows = result if isinstance(result, list) else list(result)  # type: ignore[call-overload]
        return verify_rows(rows, expected_hash=expected, hash_rows=hash_rows, expected_rows=lambda: records,
                           difference=difference)

    return check
