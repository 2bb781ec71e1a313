"""The entities suite: what wide entities cost to decode and encode (docs/studies/entities.md).

Reproduces Evan Jones's 2016 App Engine study of wide Datastore entities
with today's libraries (google-cloud-ndb, google-cloud-datastore, the v1
``Entity`` protobuf under upb), offline, and holds stratabench's own lazy
entity (:mod:`stratabench.systems.lazy`) to the targets of docs/studies/entities.md §6.

Cells (docs/studies/entities.md §5):

- ``get20`` — the published table: the store's multi-get of the 20 keys of
  the get set, then ``bytes`` (nothing more), ``message`` (upb parse),
  ``datastore`` (``google.cloud.datastore.Entity``), ``ndb.decode`` (ndb's
  converter, no framework), ``ndb.get`` (``ndb.get_multi`` through ndb's
  global cache over the store) or ``lazy``. On the memory store the read
  patterns run too (first property, all, the lazy entity's materialize, the
  plain dict from a parsed message; ``entities.reads`` adds ``10``).
  ``bytes``, ``message`` and ``datastore`` never build a model, so they are
  measured once per schema and width, on the ``model`` kind (the three
  flavours store the same bytes but for the kind's name).
- ``decode`` — each step from bytes to objects, at the largest width: the
  raw parse, the parse into one reused message, message → ``datastore.Entity``,
  ``datastore.Entity`` → ndb, bytes → ndb, bytes → lazy entity (and its
  parse-on-access variant); plus the raw parse and the lazy entity under the
  pure-Python protobuf runtime (their own worker, labelled ``backend python``).
- ``encode`` — each step back to bytes, at the largest width.

Stores: ``memory`` and ``sqlite`` always; the run's ``--store`` URLs of
Redis and memcached (``--services local`` starts them), where ``ndb.get`` also
runs through ndb's bundled ``RedisCache``/``MemcacheCache``; other ``--store``
kinds when ``entities.stores`` names them (or ``all``).

Settings (``entities.*``: subsets of schemas, widths, flavours, stores,
cells and read patterns; ``entities.full=yes`` for every path and read
pattern on every store, where the default keeps the run to a few minutes,
see ``EntitiesSuite._get_plan``; a calibration target below ``--min-time``
because the suite has many cells of a few milliseconds):
``stratabench list settings`` shows them with their defaults.

What it cannot do: the optional RPC path of docs/studies/entities.md §4.3 (a Datastore v1 gRPC
stand-in) is not implemented, and the report says so; ``db`` (finding 6)
no longer exists.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stratabench.datasets import entities as E
from stratabench.engine.operation import CellSpec, Operation, PairedBound
from stratabench.engine.sampling import ROBUST_ROUNDS
from stratabench.errors import UsageError
from stratabench.layers.mappers.ndb_toolkit import generate
from stratabench.settings import Setting
from stratabench.suites import SUITES
from stratabench.suites.entities.operations import (
    DECODE_STEPS,
    ENCODE_STEPS,
    READS,
    decode_operation,
    encode_operation,
    get_operation,
)
from stratabench.suites.kit.stores import RunStore, real_url, run_stores
from stratabench.layers.stores.namespaces import cell_namespace
from stratabench.suites.entities.report import TARGET_CELLS, target_bounds
from stratabench.suites.kit.suite import Suite, min_time_setting

__all__ = ["DEFAULT_MIN_SAMPLE_NS", "PYTHON_PROTOBUF_ENV", "EntitiesSuite", "path_mapper"]

#: The calibration target unless ``entities.min_time`` says otherwise.
DEFAULT_MIN_SAMPLE_NS = 10_000_000
#: Selects protobuf's pure-Python runtime; must be set before protobuf is imported.
PYTHON_PROTOBUF_ENV = {"PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": "python"}
#: Server stores used by default when the run has their URL; others only when named.
DEFAULT_SERVER_STORES = ("redis", "memcached")
#: Stores whose ndb bundled global cache is also measured.
BUNDLED_CACHES = ("redis", "memcached")
DEFAULT_READS = ("1", "all", "materialize", "dict")
#: The cell families, in the order cells are listed.
FAMILIES = ("get20", "decode", "encode")
#: Paths whose objects do not depend on the flavour: measured on the model kind only.
FLAVOUR_FREE = ("bytes", "message", "datastore")


def path_mapper(path: str) -> str | None:
    """The registered mapper a get, decode or encode path goes through (``ndb.decode`` → ``ndb``), or ``None`` for raw bytes."""
    head = path.partition(".")[0]
    return {"message": "protobuf", "bytes": None}.get(head, head)


def _divided_flavour(plan: Sequence[tuple[str, str, str]], flavour: str, path: str, read: str) -> str | None:
    """The flavour of the get20 cell ``(path, read)`` in ``plan`` that a ratio of a ``flavour`` cell divides by,
    as the report finds it: the same flavour, or for a flavour-free path the one flavour it runs in."""
    runs = [other for step, other, reading in plan if (step, reading) == (path, read)]
    if flavour in runs:
        return flavour
    return runs[0] if runs and path in FLAVOUR_FREE else None

@SUITES.register("entities", requires=("google.cloud.ndb", "google.cloud.datastore"), extra="entities")
class EntitiesSuite(Suite):
    """Wide entities: ndb vs the generic entity vs a lazy entity (Evan Jones's datastore study, 2016)."""

    settings = (
        Setting("entities.schemas", "", f"schemas; default all: {','.join(E.SCHEMAS)}", "list"),
        Setting("entities.widths", "", f"properties per entity; default all: {','.join(map(str, E.WIDTHS))}",
                "list"),
        Setting("entities.flavours", "", f"model flavours; default all: {','.join(E.FLAVOURS)}", "list"),
        Setting("entities.stores", "", "stores for get20 (labels or kinds, or all); default memory, sqlite and "
                f"the run's {' and '.join(DEFAULT_SERVER_STORES)}", "list"),
        Setting("entities.cells", "", f"cell families; default all: {','.join(FAMILIES)}", "list"),
        Setting("entities.reads", "", f"read patterns on the memory store, from {','.join(READS[1:])}; "
                f"default {','.join(DEFAULT_READS)} (all with entities.full)", "list"),
        Setting("entities.python_protobuf", "yes", "also decode under the pure-Python protobuf runtime", "flag"),
        Setting("entities.full", "no", "every path and read pattern on every store (a long run)", "flag"),
        min_time_setting("entities", DEFAULT_MIN_SAMPLE_NS),
    )

    @property
    def seed(self) -> int:
        return E.DEFAULT_SEED if self.options.seed is None else self.options.seed

    def _choose(self, setting: str, known: Sequence[Any], convert: type = str) -> list[Any]:
        raw = self.config.items(setting)
        if not raw:
            return list(known)
        try:
            chosen = [convert(item) for item in raw]
        except ValueError:
            raise UsageError(f"{setting}: {','.join(raw)} is not a list of {convert.__name__}") from None
        unknown = [str(item) for item in chosen if item not in known]
        if unknown:
            raise UsageError(f"{setting}: unknown {', '.join(unknown)}; use {', '.join(map(str, known))}")
        return [item for item in known if item in chosen]

    def stores(self) -> list[RunStore]:
        """``memory``, ``sqlite``, then the run's server stores this suite uses (see the module docstring)."""
        choices = run_stores(self.options, embedded=("memory", "sqlite"))
        wanted = self.config.items("entities.stores")
        if not wanted:
            return [c for c in choices if c.url == "" or c.kind in DEFAULT_SERVER_STORES]
        if wanted == ["all"]:
            return choices
        unknown = [name for name in wanted if name not in {c.label for c in choices} | {c.kind for c in choices}]
        if unknown:
            raise UsageError(
                f"entities.stores: no store {', '.join(unknown)} in this run; stores: "
                f"{', '.join(c.label for c in choices)} (servers come from --store or --services local)"
            )
        return [c for c in choices if c.label in wanted or c.kind in wanted]

    def cells(self) -> list[CellSpec]:
        schemas = self._choose("entities.schemas", E.SCHEMAS)
        widths = self._choose("entities.widths", E.WIDTHS, int)
        flavours = self._choose("entities.flavours", E.FLAVOURS)
        families = self._choose("entities.cells", FAMILIES)
        chosen_reads = self.config.given("entities.reads")
        reads = self._choose("entities.reads", READS[1:]) if chosen_reads else list(DEFAULT_READS)
        python_protobuf = self.config.flag("entities.python_protobuf")
        full = self.config.flag("entities.full")
        if full and not chosen_reads:
            reads = [read for read in READS[1:]]
        base = {"seed": self.seed, "backend": "upb"}
        cells: list[CellSpec] = []

        def add(family: str, params: dict[str, Any], name: str, env: dict[str, str] | None = None,
                min_rounds: int | None = None, bounds: tuple[PairedBound, ...] = ()) -> None:
            # A family's cells are what its tables, targets and findings divide: back to back each round.
            cells.append(self.spec(f"{family} {name}", {"cell": family, **base, **params}, env=env or {}, group=family,
                                   min_rounds=min_rounds, bounds=bounds))

        def get20_name(store: str, schema: str, width: int, flavour: str, path: str, read: str) -> str:
            return f"{store} {schema}/{width} {flavour} {path} read={read}"

        if "get20" in families:
            for store in self.stores():
                for schema in schemas:
                    for width in widths:
                        plan = self._get_plan(store, flavours, reads, width, full)
                        for path, flavour, read in plan:
                            params = {"store": store.label, "store_kind": store.kind, "url": store.url,
                                      "schema": schema, "n_props": width, "flavour": flavour, "path": path,
                                      "read": read}
                            # A target's two sides take rounds enough that one disturbed round cannot flip it,
                            # and more while its ratio is too close to its bound to call (the engine decides).
                            robust = store.label == "memory" and (path, read) in TARGET_CELLS
                            bounds = tuple(
                                PairedBound(f"get20 {get20_name(store.label, schema, width, other, *den)}", bound)
                                for den, bound in target_bounds(path, read, width)
                                if (other := _divided_flavour(plan, flavour, *den)) is not None) if robust else ()
                            add("get20", params, get20_name(store.label, schema, width, flavour, path, read),
                                min_rounds=ROBUST_ROUNDS if robust else None, bounds=bounds)
        widest = max(widths)
        for schema in schemas:
            common = {"store": "", "store_kind": "", "url": "", "schema": schema, "n_props": widest, "read": "0"}
            if "decode" in families:
                for step in DECODE_STEPS:
                    add("decode", {**common, "flavour": "model", "path": step},
                        f"{schema}/{widest} model {step}")
            if "encode" in families:
                for step in ENCODE_STEPS:
                    for flavour in (flavours if step == "ndb.encode" else ["model"]):
                        add("encode", {**common, "flavour": flavour, "path": step},
                            f"{schema}/{widest} {flavour} {step}")
        if "decode" in families and python_protobuf:
            # Last, so that the upb cells have filled the dataset cache: the
            # pure-Python worker then never runs ndb's encoder.
            schema = "text" if "text" in schemas else schemas[0]
            for step in ("message", "lazy"):
                params = {"store": "", "store_kind": "", "url": "", "schema": schema, "n_props": widest,
                          "flavour": "model", "path": step, "read": "0", "backend": "python"}
                add("decode", params, f"{schema}/{widest} model {step} backend=python", env=PYTHON_PROTOBUF_ENV)
        if self.options.mappers:  # --mapper: only the cells whose path goes through one of these mappers
            cells = [cell for cell in cells if path_mapper(cell.params["path"]) in self.options.mappers]
        return cells

    @staticmethod
    def _get_plan(
        store: RunStore, flavours: list[str], reads: list[str], width: int, full: bool
    ) -> list[tuple[str, str, str]]:
        """(path, flavour, read) of a store's get20 cells at one schema and width.

        The default keeps the run within a few minutes: read patterns run on
        the memory store only, and ndb's bare decode (whose import of ndb
        costs a second per cell) on the memory store only, read all at the
        largest width only. ``entities.full=yes`` runs every combination.
        """
        first = flavours[0] if "model" not in flavours else "model"
        patterns = reads if store.kind == "memory" or full else []
        plan = [("bytes", first, "0"), ("message", first, "0"), ("datastore", first, "0")]
        if "dict" in patterns:
            plan.append(("message", first, "dict"))
        for flavour in flavours:
            plan += [("ndb.get", flavour, "0")]
            if store.kind in BUNDLED_CACHES:
                plan.append(("ndb.get.bundled", flavour, "0"))
            if store.kind == "memory" or full:
                plan.append(("ndb.decode", flavour, "0"))
                if "all" in patterns and (width == max(E.WIDTHS) or full):
                    plan.append(("ndb.decode", flavour, "all"))
            plan.append(("lazy", flavour, "0"))
            plan += [("lazy", flavour, read) for read in patterns if read != "dict"]
        return plan

    @classmethod
    def preload(cls) -> tuple[str, ...]:
        return (*super().preload(), "stratabench.systems.lazy")  # the lazy entity, imported by its mapper when used

    @classmethod
    def warm(cls) -> None:
        # Every cell starts from one of these twelve datasets (about 70 ms each to build), and builds the classes
        # of its kind: ndb's model class (with the first, ndb's offline client: 3-8 ms a visit, a third of an ndb
        # cell's preparation) and the lazy entity's. Neither is what a cell measures: a decode, an encode or a get
        # through ndb's machinery needs them made before its first sample, and is timed the same with classes the
        # zygote made (they hold no data of a cell; what a cell's samples change stays in its own process).
        from stratabench.layers.mappers.lazy_entity import lazy_class
        from stratabench.layers.mappers.ndb_toolkit import ndb_class

        for schema, width, flavour in itertools.product(E.SCHEMAS, E.WIDTHS, E.FLAVOURS):
            dataset = generate(schema, width, flavour, E.DEFAULT_SEED)
            ndb_class(schema, width, flavour)
            lazy_class(dataset)

    # -- inside the worker ----------------------------------------------------------

    def prepare(self, cell: CellSpec, workdir: Path) -> Operation:
        params = cell.params
        dataset = generate(params["schema"], params["n_props"], params["flavour"], params["seed"])
        family = params["cell"]
        if family == "decode":
            operation = decode_operation(dataset, params["path"], params["read"])
        elif family == "encode":
            operation = encode_operation(dataset, params["path"], workdir)
        elif family == "get20":
            operation = self._get20(cell, dataset, workdir)
        else:
            raise UsageError(f"unknown entities cell family {family!r}; use get20, decode or encode")
        operation.notes.setdefault("dataset", dataset.name)
        operation.notes["backend"] = _protobuf_backend()
        # Samples of 10 ms: a run's rounds give each cell a fresh worker several times, so its interval comes
        # from the rounds, and a round's samples need only outlast the clock's resolution.
        operation.engine = self.tuned_engine(DEFAULT_MIN_SAMPLE_NS)
        return operation

    def _get20(self, cell: CellSpec, dataset: E.EntitiesDataset, workdir: Path) -> Operation:
        from stratabench.layers.stores import open_store
        from stratabench.layers.stores.base import batch_putter

        params = cell.params
        url = real_url(self.options, params["url"]) if params["url"] else None
        default = "memory://" if params["store_kind"] == "memory" else f"sqlite://{workdir}/entities.db"
        store = open_store(url or default, namespace=cell_namespace(self.options, "entities", cell.name),
                           options=self.options)
        cleanups = [store.close, store.cleanup]
        try:
            items = [(dataset.cache_key(ident), dataset.blob(ident)) for ident in dataset.ids]
            batch_putter(store)(items)
            path, global_cache = params["path"], None
            if path == "ndb.get.bundled":
                global_cache, forget = _bundled_cache(params["store_kind"], url or "", dict(items))
                cleanups.append(forget)
                path = "ndb.get"
            operation = get_operation(dataset, path, params["read"], store, global_cache=global_cache)
        except BaseException:
            _run_all(cleanups)
            raise
        operation.server_pids = store.server_pids
        operation.waits = params["store_kind"] != "memory"  # SQLite's file, a server: judged on wall time
        operation.size_bytes = sum(len(dataset.blob(ident)) for ident in dataset.get_ids)
        operation.close = lambda: _run_all(cleanups)
        operation.notes["store"] = store.redacted_url
        if params["path"] == "ndb.get.bundled":
            operation.notes["ndb"] = f"get_multi through ndb's own {type(global_cache).__name__}"
        return operation


def _run_all(cleanups: list[Any]) -> None:
    """Run cleanups last-registered first; the first failure is raised after all ran."""
    failure: BaseException | None = None
    for cleanup in reversed(cleanups):
        try:
            cleanup()
        except BaseException as error:  # noqa: BLE001 -- every cleanup must get its chance
            failure = failure or error
    if failure is not None:
        raise failure


def _protobuf_backend() -> str:
    from google.protobuf.internal import api_implementation

    return str(api_implementation.Type())


def _bundled_cache(kind: str, url: str, items: dict[bytes, bytes]) -> tuple[Any, Any]:
    """ndb's own RedisCache or MemcacheCache on the store's server, loaded with the dataset.

    ndb's bundled caches use their keys as they are (no namespace prefix), so
    the records are written only where no key exists yet, and exactly those
    are deleted afterwards; a key already there is someone else's and is
    left alone (the cell then fails its integrity check if it differs).
    """
    from google.cloud.ndb import global_cache

    from stratabench.errors import StoreError, UnavailableError

    client: Any
    if kind == "redis":
        import redis

        client = redis.Redis.from_url(url)
        cache = global_cache.RedisCache(client, strict_read=True, strict_write=True)
    elif kind == "memcached":
        from stratabench.layers.stores.memcached import memcached_client

        client = memcached_client(url)
        cache = global_cache.MemcacheCache(client, strict_read=True, strict_write=True)
    else:
        raise UnavailableError(f"ndb has no bundled global cache for {kind}; only redis and memcached")
    written: list[bytes] = []

    def forget() -> None:
        try:
            if written:
                cache.delete(written)
        finally:
            client.close()

    try:
        written += [key for key, done in cache.set_if_not_exists(items).items() if done]
    except Exception as error:  # noqa: BLE001 -- the driver's errors, one line
        forget()
        raise StoreError(f"ndb's {type(cache).__name__} could not load the dataset: {error}") from None
    return cache, forget
