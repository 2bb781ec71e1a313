"""The entities suite's tables: the 2016 table beside ours, the steps, the targets, the findings.

The study reproduced is evanj/datastore-performance (2016). Tables:

1. **Get of 20, per store**, shaped like the published table: ``ndb.get``,
   ``datastore`` and ``lazy`` per get of 20 entities (and the store's bare
   multi-get, and ndb's bare decode beside its get),
   then ``ndb.get ÷ lazy`` and ``datastore ÷ lazy``. The published row is
   printed under ours where one exists (text schema, 100 properties); the
   ``db`` rows, which have no counterpart today, close the first table.
2. **Read patterns** on the memory store: what reading 1, all, or
   everything at once costs on top of each decode.
3. **Decode steps** and 4. **encode steps**, per batch and per entity, with
   ratios against the raw protobuf parse and the raw serialize.
5. **The lazy entity's targets**, each met or missed.
6. **Findings** of the 2016 study, each reproduced or refuted on this machine.

Ratios are paired: the median of per-round ratios of two cells measured in
the same rounds (:func:`~stratabench.report.compare.paired`), so the
machine's drift over the run cancels; ``~`` marks a ratio whose interval
includes 1 (a file from before rounds: whose two medians' intervals
overlap), too close to call. Ratios, targets and findings are of each
cell's judged figure (docs/studies/entities.md §11): the worker thread's CPU
time for work in the thread (decodes, encodes, a get20 from the in-process
memory store), which the other work of a shared machine disturbs far less
than wall time, and wall time for a get20 that waits on SQLite or a server.
A target is *met* when the measured ratio's interval lies on the right side
of its bound, *missed* when it lies on the wrong side, and too close to call
when it straddles the bound. A finding is *reproduced*
when this run shows the published direction beyond noise, by at least the
published lower bound where one is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stratabench.datasets.entities import FLAVOURS, SCHEMAS, WIDTHS
from stratabench.options import RunOptions
from stratabench.report.answer import Answer, Candidate, answer
from stratabench.report.compare import BASE, Ratio, paired, ratio_text
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult
from stratabench.results.stats import Summary
from stratabench.suites.kit.findings import (TARGET, Finding, ResultIndex, Verdict, all_of, findings_table,
                                             judge, judge_at_most, said)
from stratabench.suites.kit.problems import problem_lines
from stratabench.suites.kit.reports import ChartPlan, study_answer, study_charts, study_figure, study_report
from stratabench.units import format_ns

__all__ = ["PUBLISHED", "TARGET_CELLS", "target_bounds", "EntitiesResults", "entities_answer", "Target", "entities_report", "entities_tables", "findings", "targets"]

#: The 2016 figures (ms per get of 20, App Engine F1, real RPC): class, N, library get, GetAsync, lazy get.
PUBLISHED: tuple[tuple[str, int, float, float, float], ...] = (
    ("db.Model", 10, 79, 60, 32),
    ("db.Model", 100, 303, 268, 80),
    ("db.Expando", 100, 576, 251, 80),
    ("ndb.Model", 100, 154, 208, 70),
    ("ndb.Expando", 100, 149, 191, 59),
)
CLASS_OF = {"model": "ndb.Model", "expando": "ndb.Expando", "dynamic": "ndb.Expando (dynamic)"}
FLAVOUR_FREE = ("bytes", "message", "datastore")


STUDY = "evanj/datastore-performance (2016)"


def _wall(result: CellResult | None) -> Summary | None:
    return None if result is None or not result.ok else result.summary("wall_ns")


def _median(result: CellResult | None) -> float | None:
    summary = _wall(result)
    return None if summary is None else summary.median


def _cpu_median(result: CellResult | None) -> float | None:
    summary = None if result is None or not result.ok else result.summary("cpu_ns")
    return None if summary is None else summary.median


class EntitiesResults(ResultIndex):
    """The suite's results indexed by their coordinates."""

    def __init__(self, results: Sequence[CellResult]) -> None:
        super().__init__(results, "entities", ("cell", "store", "schema", "n_props", "flavour", "path", "read", "backend"),
                         missing={"backend": "upb"})
        self.stores: list[str] = list(
            dict.fromkeys(str(r.params.get("store")) for r in self.results if r.params.get("cell") == "get20")
        )
        self.schemas = [s for s in SCHEMAS if any(r.params.get("schema") == s for r in self.results)]
        self.widths = [w for w in WIDTHS if any(r.params.get("n_props") == w for r in self.results)]
        self.flavours = [f for f in FLAVOURS if any(r.params.get("flavour") == f for r in self.results)]

    def get20(self, store: str, schema: str, n: int, flavour: str, path: str, read: str = "0") -> CellResult | None:
        found = self.find(cell="get20", store=store, schema=schema, n_props=n, flavour=flavour, path=path, read=read)
        if found is None and path in FLAVOUR_FREE:
            for other in FLAVOURS:
                found = found or self.find(cell="get20", store=store, schema=schema, n_props=n, flavour=other, path=path,
                                           read=read)
        return found

    def step(self, family: str, schema: str, n: int, flavour: str, path: str, backend: str = "upb") -> CellResult | None:
        return self.find(cell=family, store="", schema=schema, n_props=n, flavour=flavour, path=path, read="0",
                         backend=backend)

    @property
    def step_width(self) -> int | None:
        widths = [r.params.get("n_props") for r in self.results if r.params.get("cell") in ("decode", "encode")]
        return max(widths) if widths else None  # type: ignore[type-var]


def _ok(result: CellResult | None) -> CellResult | None:
    return result if result is not None and result.ok else None


def _r(numerator: CellResult | None, denominator: CellResult | None) -> Ratio | None:
    """A paired ratio of the cells' judged figure (the median of per-round ratios; see
    :func:`~stratabench.report.compare.paired`): what tables, targets and findings use."""
    return paired(_ok(numerator), _ok(denominator))


def _cpu(result: CellResult | None) -> Summary | None:
    return None if result is None or not result.ok else result.summary("cpu_ns")


# --- 1. the 2016 table ---------------------------------------------------------------------------


def _get_tables(c: EntitiesResults) -> list[Table]:
    tables = []
    for index, store in enumerate(c.stores):
        columns = [
            Column("class", "model class"), Column("n", "properties", "right"), Column("schema", "schema"),
            Column("bytes", "multi-get", "right", format_ns, priority=2),
            Column("ndb_get", "ndb.get", "right", format_ns),
            Column("ndb_decode", "ndb.decode", "right", format_ns, priority=1),
            Column("datastore", "datastore", "right", format_ns), Column("lazy", "lazy", "right", format_ns),
            Column("get_lazy", "ndb.get ÷ lazy", "right", ratio_text),
            Column("ds_lazy", "datastore ÷ lazy", "right", ratio_text, priority=1),
            Column("decode_lazy", "ndb.decode ÷ lazy", "right", ratio_text, priority=2),
        ]
        table = Table(f"entities on {store}: time per get of 20 entities, none of their properties read, beside "
                      f"the table of {STUDY}", columns)
        published = {(cls, n): (get, getasync, lazy) for cls, n, get, getasync, lazy in PUBLISHED}
        for flavour in c.flavours:
            for n in c.widths:
                for schema in c.schemas:
                    cells = {path: c.get20(store, schema, n, flavour, path) for path in
                             ("bytes", "ndb.get", "ndb.decode", "datastore", "lazy")}
                    lazy = cells["lazy"]
                    table.rows.append({
                        "class": CLASS_OF[flavour], "n": n, "schema": schema,
                        "bytes": _median(cells["bytes"]), "ndb_get": _median(cells["ndb.get"]),
                        "ndb_decode": _median(cells["ndb.decode"]), "datastore": _median(cells["datastore"]),
                        "lazy": _median(lazy), "get_lazy": _r(cells["ndb.get"], lazy),
                        "ds_lazy": _r(cells["datastore"], lazy), "decode_lazy": _r(cells["ndb.decode"], lazy),
                    })
                    figures = published.get((CLASS_OF[flavour], n)) if schema == "text" else None
                    if figures is not None:
                        get, getasync, lazy_ms = figures
                        table.rows.append({
                            "class": "  2016, App Engine", "n": n, "schema": "text",
                            "ndb_get": get * 1e6, "datastore": getasync * 1e6, "lazy": lazy_ms * 1e6,
                            "get_lazy": Ratio(get / lazy_ms, False), "ds_lazy": Ratio(getasync / lazy_ms, False),
                        })
                    for extra in ("ndb.get.bundled",):
                        bundled = c.get20(store, schema, n, flavour, extra)
                        if bundled is not None:
                            table.rows.append({"class": f"  ndb.get via ndb's own cache", "n": n, "schema": schema,
                                               "ndb_get": _median(bundled), "get_lazy": _r(bundled, lazy)})
        if index == 0:
            for cls, n, get, getasync, lazy_ms in PUBLISHED:
                if cls.startswith("db."):
                    table.rows.append({
                        "class": f"{cls} (2016; db is gone)", "n": n, "schema": "text",
                        "ndb_get": get * 1e6, "datastore": getasync * 1e6, "lazy": lazy_ms * 1e6,
                        "get_lazy": Ratio(get / lazy_ms, False), "ds_lazy": Ratio(getasync / lazy_ms, False),
                    })
        table.notes += [
            "ndb.get: ndb.get_multi(use_cache=False, use_datastore=False) through a global cache over this store "
            "(ndb's whole read path); ndb.decode: multi-get, then ndb's converter alone; datastore: multi-get, "
            "then bytes → google.cloud.datastore.Entity; lazy: multi-get, then stratabench's lazy entity.",
            "The 2016 rows include a real Datastore RPC (library get, datastore.GetAsync, lazy get); ours read "
            "the same bytes from the store, with no RPC: compare ratios, not milliseconds. This version measures "
            "no RPC path of its own.",
            "multi-get, datastore and the raw parse do not depend on the flavour: measured on the model kind, "
            "shown on every flavour's row.  ~: the two medians' confidence intervals overlap.",
        ]
        table.notes += problem_lines(r for r in c.results if r.params.get("store") == store)
        tables.append(table)
    return tables


# --- 2. read patterns ----------------------------------------------------------------------------

_READ_COLUMNS = (
    ("message", "0", "raw parse"), ("message", "dict", "parse + dict"), ("lazy", "0", "lazy 0"),
    ("lazy", "1", "lazy 1"), ("lazy", "10", "lazy 10"), ("lazy", "all", "lazy all"),
    ("lazy", "materialize", "lazy materialize"), ("datastore", "0", "datastore"),
    ("ndb.decode", "0", "ndb.decode 0"), ("ndb.decode", "all", "ndb.decode all"),
)


def _reads_table(c: EntitiesResults) -> Table | None:
    store = "memory" if "memory" in c.stores else (c.stores[0] if c.stores else None)
    if store is None:
        return None
    present = [(path, read, header) for path, read, header in _READ_COLUMNS
               if any(c.get20(store, s, n, f, path, read) for s in c.schemas for n in c.widths for f in c.flavours)]
    columns = [Column("schema", "schema"), Column("n", "properties", "right"), Column("flavour", "flavour")]
    columns += [Column(f"{path}/{read}", header, "right", format_ns) for path, read, header in present]
    table = Table(f"entities on {store}: get of 20 with read patterns (time per get)", columns)
    for schema in c.schemas:
        for n in c.widths:
            for flavour in c.flavours:
                row: dict[str, Any] = {"schema": schema, "n": n, "flavour": flavour}
                for path, read, _ in present:
                    row[f"{path}/{read}"] = _median(c.get20(store, schema, n, flavour, path, read))
                table.rows.append(row)
    table.notes.append(
        "Each cell is multi-get + decode + the read: 1 and 10 read the first properties, all reads every one "
        "attribute by attribute, materialize is the lazy entity's bulk read, dict is a plain dict built from "
        "the parsed message (the materialize target's baseline)."
    )
    return table


# --- 3, 4. steps ---------------------------------------------------------------------------------

_DECODE_LABELS = {
    "message": "bytes → v1 message (upb parse)",
    "message.reuse": "bytes → one reused message (clear + merge)",
    "datastore": "bytes → datastore.Entity",
    "datastore.from_message": "v1 message → datastore.Entity",
    "ndb.from_datastore": "datastore.Entity → ndb instance",
    "ndb": "bytes → ndb instance (ndb's converter)",
    "lazy": "bytes → lazy entity (parse now)",
    "lazy.defer": "bytes → lazy entity (parse on access; extra)",
}
_ENCODE_LABELS = {
    "message.serialize": "v1 message → bytes",
    "datastore.to_message": "datastore.Entity → proto-plus message",
    "datastore.to_bytes": "datastore.Entity → bytes",
    "ndb.to_datastore": "ndb instance → datastore.Entity",
    "ndb.build": "ndb instance built from values (subtract)",
    "ndb.build+encode": "fresh ndb instance → bytes (build included)",
    "ndb.encode": "ndb instance encoded before → bytes",
    "lazy.unmodified": "lazy entity, unmodified → bytes",
    "lazy.changed": "lazy entity, one property changed → bytes",
    "lazy.encode": "plain values → bytes (lazy schema encoder)",
}


def _step_columns(base: str) -> list[Column]:
    return [
        Column("schema", "schema"), Column("step", "step"), Column("flavour", "flavour"),
        Column("batch", "per batch of 20", "right", format_ns), Column("entity", "per entity", "right", format_ns),
        Column("ratio", f"÷ {base}", "right", ratio_text), Column("note", "note"),
    ]


def _step_tables(c: EntitiesResults) -> list[Table]:
    n = c.step_width
    if n is None:
        return []
    tables = []
    decode = Table(f"entities: decode steps at {n} properties", _step_columns("raw parse"))
    encode = Table(f"entities: encode steps at {n} properties", _step_columns("serialize"))
    for schema in c.schemas:
        base = c.step("decode", schema, n, "model", "message")
        for step, label in _DECODE_LABELS.items():
            result = c.step("decode", schema, n, "model", step)
            if result is not None:
                decode.rows.append(_step_row(schema, label, "model", result, base))
        for step in ("message", "lazy"):
            result = c.step("decode", schema, n, "model", step, backend="python")
            if result is not None:
                decode.rows.append(_step_row(schema, _DECODE_LABELS[step] + " [pure-Python protobuf]",
                                             "model", result, base))
        base = c.step("encode", schema, n, "model", "message.serialize")
        for step, label in _ENCODE_LABELS.items():
            for flavour in FLAVOURS:
                result = c.step("encode", schema, n, flavour, step)
                if result is not None:
                    row = _step_row(schema, label, flavour, result, base)
                    row["note"] = result.notes.get("index flags") if result.ok else row["note"]
                    encode.rows.append(row)
    decode.notes.append("lazy.defer only records the bytes; its parse and identity check happen at the first "
                        "read, so corrupt bytes fail later: a labelled extra, not the lazy entity's number.")
    encode.notes.append("ndb re-saves an Expando's dynamic properties as indexed: 'index flags changed' on the "
                        "dynamic row is today's ndb, shown as measured. Values are verified on every row.")
    for table in (decode, encode):
        family = "decode" if table is decode else "encode"
        table.notes += problem_lines(r for r in c.results if r.params.get("cell") == family)
        if table.rows:
            tables.append(table)
    return tables


def _step_row(schema: str, label: str, flavour: str, result: CellResult, base: CellResult | None) -> dict[str, Any]:
    batch = _median(result)
    return {
        "schema": schema, "step": label, "flavour": flavour, "batch": batch,
        "entity": None if batch is None else batch / 20,
        "ratio": (BASE if result is base else _r(result, base)),
        "note": None if result.ok else f"{result.status}: {result.error}",
    }


# --- 5. targets ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One performance target of the lazy entity, judged on this run.

    Attributes
    ----------
    target
        What is held to what, and the bound.
    where
        Schema and width, and the flavour whose ratio is the worst.
    measured
        The worst measured ratio across flavours.
    verdict
        ``met``, ``missed`` or ``not measured``.
    probe
        What the prototype measured before the lazy entity was built (kept for the record; not printed).
    """

    target: str
    where: str
    measured: Ratio | None
    verdict: str
    probe: str


_TARGETS: tuple[tuple[str, str, str, str, str, tuple[int, ...], str, float, str], ...] = (
    # label, numerator (path, read), denominator (path, read), widths, direction, bound, probe
    ("lazy read 0 ÷ raw parse ≤ 1.25×", "lazy", "0", "message", "0", (10, 100), "le", 1.25, "0.98–1.17×"),
    ("lazy read 1 ÷ raw parse ≤ 1.2× at 100 properties", "lazy", "1", "message", "0", (100,), "le", 1.2, "1.06–1.07×"),
    ("lazy read 1 ÷ raw parse ≤ 2× at 10 properties", "lazy", "1", "message", "0", (10,), "le", 2.0, "1.66–1.71×"),
    ("lazy read all ÷ datastore.Entity ≤ 1×", "lazy", "all", "datastore", "0", (10, 100), "le", 1.0, "0.47–0.78×"),
    ("materialize ÷ plain dict ≤ 1.2×", "lazy", "materialize", "message", "dict", (10, 100), "le", 1.2,
     "-"),
    ("ndb.decode ÷ lazy read 0 ≥ 10× at 100 properties", "ndb.decode", "0", "lazy", "0", (100,), "ge", 10.0, "13–33×"),
)


#: The (path, read) of every get20 cell a target divides, on the memory store: these take robust rounds.
TARGET_CELLS = frozenset(cell for row in _TARGETS for cell in ((row[1], row[2]), (row[3], row[4])))


def target_bounds(path: str, read: str, width: int) -> list[tuple[tuple[str, str], float]]:
    """The targets whose numerator is the get20 cell ``(path, read)`` at ``width`` properties: each one's
    denominator ``(path, read)`` (same store, schema, width and flavour) and bound, for the engine to decide."""
    return [((den_path, den_read), bound) for _, num_path, num_read, den_path, den_read, widths, _, bound, _ in _TARGETS
            if (num_path, num_read) == (path, read) and width in widths]


def targets(results: Sequence[CellResult]) -> list[Target]:
    """The lazy entity's targets on the memory store, worst flavour per schema and width."""
    c = EntitiesResults(results)
    store = "memory"
    found = []
    for label, num_path, num_read, den_path, den_read, widths, direction, bound, probe in _TARGETS:
        for n in (w for w in c.widths if w in widths):
            for schema in c.schemas:
                measured: list[tuple[Ratio, str]] = []
                for flavour in c.flavours:
                    value = _r(c.get20(store, schema, n, flavour, num_path, num_read),
                               c.get20(store, schema, n, flavour, den_path, den_read))
                    if value is not None:
                        measured.append((value, flavour))
                where = f"{schema}/{n}"
                if not measured:
                    found.append(Target(label, where, None, Verdict.NOT_MEASURED.value, probe))
                    continue
                worst, worst_flavour = (max if direction == "le" else min)(measured, key=lambda item: item[0].value)
                # Sure only when the ratio's interval clears the bound: a ratio straddling it is too close to
                # call, where a point value flipped between met and missed from run to run.
                above = worst.clear_of(bound)
                if above is None:
                    # At a bound of 1× the two sides are the same work: a ratio within noise of it meets it.
                    judged = Verdict.HOLDS if bound == 1.0 else Verdict.WITHIN_NOISE
                else:
                    judged = Verdict.HOLDS if above == (direction == "ge") else Verdict.DOES_NOT_HOLD
                noise = above is None and bound == 1.0
                verdict = said(judged, TARGET, "within noise" if noise else "")
                found.append(Target(label, f"{where} ({worst_flavour})", worst, verdict, probe))
    return found


def _targets_table(results: Sequence[CellResult]) -> Table:
    table = Table("entities: the lazy entity's own targets, get of 20 from the memory store",
                  [Column("target", "target"), Column("where", "schema/properties (worst flavour)"),
                   Column("measured", "measured", "right", ratio_text), Column("verdict", "verdict")])
    for target in targets(results):
        table.rows.append({"target": target.target, "where": target.where, "measured": target.measured,
                           "verdict": target.verdict})
    table.notes.append("Every get includes the memory store's multi-get. Paired ratios of the thread's CPU time "
                       "(the memory store's cells are judged on it); the worst flavour's ratio is shown. A target "
                       "is met or missed only when the ratio's interval clears its bound, else too close to call. "
                       "Both sides take nine rounds at the least, so one disturbed round cannot decide it. "
                       "~: the interval includes 1.")
    return table


# --- 6. findings ---------------------------------------------------------------------------------


def _span(ratios: Sequence[Ratio]) -> str:
    if not ratios:
        return "-"
    low, high = min(r.value for r in ratios), max(r.value for r in ratios)
    noisy = " (some ~)" if any(r.within_noise for r in ratios) else ""
    return (f"{low:.3g}×" if abs(high - low) < 0.005 * high else f"{low:.3g}–{high:.3g}×") + noisy


def _at_least(ratios: Sequence[Ratio], bound: float) -> Verdict:
    """Every ratio surely at or above ``bound``: reproduced; one surely below: refuted; else too close to call.

    A ratio whose interval straddles the bound is not evidence either way: read as "refuted" it flipped
    findings between two runs of the same code on a noisy machine.
    """
    if not ratios:
        return Verdict.NOT_MEASURED
    return all_of(*(judge(r, bound) for r in ratios))


def _within(ratio: Ratio, band: float) -> Verdict:
    """"Costs the same", within ``band`` of 1: holds when the ratio is within noise of 1 or surely inside the
    band, does not hold when surely outside it, else too close to call."""
    below, above = ratio.clear_of(1 - band), ratio.clear_of(1 + band)
    if below is False or above is True:
        return Verdict.DOES_NOT_HOLD
    if ratio.within_noise or (below is True and above is False):
        return Verdict.HOLDS
    return Verdict.WITHIN_NOISE


def _ratios(c: EntitiesResults, num: tuple[str, str], den: tuple[str, str], widths: Sequence[int] = (100,),
            flavours: Sequence[str] | None = None, store: str = "memory") -> list[Ratio]:
    found = []
    for n in (w for w in c.widths if w in widths):
        for schema in c.schemas:
            for flavour in flavours or c.flavours:
                value = _r(c.get20(store, schema, n, flavour, *num), c.get20(store, schema, n, flavour, *den))
                if value is not None:
                    found.append(value)
    return found


def _finding(fid: str, claim: str, published: str, probe: str, here: str, verdict: Verdict) -> Finding:
    return Finding(fid, claim, verdict, here=here, published=published, probe=probe)


def findings(results: Sequence[CellResult]) -> list[Finding]:
    """The 2016 study's findings 1–6 on this run."""
    c = EntitiesResults(results)
    out = []
    # 1. Decoding into models is the expensive part of a get.
    decode = _ratios(c, ("ndb.decode", "0"), ("lazy", "0"), flavours=[f for f in c.flavours if f != "dynamic"])
    get = _ratios(c, ("ndb.get", "0"), ("lazy", "0"), flavours=[f for f in c.flavours if f != "dynamic"])
    verdict = _at_least(decode + get, 2.2) if decode and get else Verdict.NOT_MEASURED
    out.append(_finding("1", "decoding wide entities into models is the expensive part of a get",
                       "library get ÷ lazy get 2.2–7.2× (with RPC)",
                       "ndb decode ÷ lazy 17–33×; get_multi ÷ lazy 12.6–18.9× (RPC)",
                       f"100 properties, memory store: ndb.decode ÷ lazy {_span(decode)}; ndb.get ÷ lazy {_span(get)}", verdict))
    # 2. The generic entity layer is itself slow.
    layer = _ratios(c, ("datastore", "0"), ("lazy", "0"))
    share = []
    n = c.step_width
    for schema in c.schemas:
        part = _cpu_median(c.step("decode", schema, n or 0, "model", "datastore"))
        whole = _cpu_median(c.step("decode", schema, n or 0, "model", "ndb"))
        if part and whole:
            share.append(f"{schema} {100 * part / whole:.0f}%")
    out.append(_finding("2", "the generic entity layer (datastore.Entity) is itself slow",
                       "GetAsync ÷ lazy 1.9–3.4×", "datastore.Entity ÷ lazy 9–20×; about half of ndb's decode",
                       f"100 properties: datastore ÷ lazy {_span(layer)}; bytes → datastore.Entity is "
                       f"{', '.join(share) or '-'} of bytes → ndb", _at_least(layer, 1.9)))
    # 3. Model vs Expando.
    declared = [r for r in (_r(c.get20("memory", s, 100, "expando", "ndb.decode"),
                               c.get20("memory", s, 100, "model", "ndb.decode")) for s in c.schemas) if r]
    dynamic = [r for r in (_r(c.get20("memory", s, 100, "dynamic", "ndb.decode"),
                              c.get20("memory", s, 100, "model", "ndb.decode")) for s in c.schemas) if r]
    if declared and dynamic:
        verdict = all_of(*(_within(r, 0.15) for r in declared), *(judge(r, 1.5) for r in dynamic))
    else:
        verdict = Verdict.NOT_MEASURED
    out.append(_finding("3", "an Expando that declares its properties costs what a Model does; dynamic ones cost more",
                       "db Expando about 2× db Model; ndb none", "declared Expando within 6%; dynamic 1.9–3.3×",
                       f"ndb.decode ÷ Model, 100 properties: declared Expando {_span(declared)}, dynamic {_span(dynamic)}",
                       verdict))
    # 4. Width scales the cost (but not the lazy entity's with few reads).
    # Paired ratios of the wide cell to the narrow one, round by round, as every other ratio here: two
    # medians taken minutes apart carried the machine's drift into a fixed bound and flipped the verdict.
    growth: dict[str, list[Ratio]] = {"ndb.decode": [], "datastore": [], "message": [], "lazy": []}
    for schema in c.schemas:
        for path, read in (("ndb.decode", "0"), ("datastore", "0"), ("message", "0"), ("lazy", "1")):
            for flavour in ["model"] if path in FLAVOUR_FREE else c.flavours:
                grew = _r(c.get20("memory", schema, 100, flavour, path, read),
                          c.get20("memory", schema, 10, flavour, path, read))
                if grew is not None:
                    growth[path].append(grew)
    if all(growth.values()):
        # The lazy entity follows the parse when its growth is surely at most 1.25x the parse's largest
        # (that bound taken at its value; the lazy ratio's own interval decides).
        parse_bound = 1.25 * max(r.value for r in growth["message"])
        verdict = all_of(*(judge(r, 4) for r in growth["ndb.decode"] + growth["datastore"]),
                         *(judge_at_most(r, parse_bound) for r in growth["lazy"]))
        here = (f"10 → 100 properties: ndb.decode {_span(growth['ndb.decode'])}, datastore {_span(growth['datastore'])}, "
                f"raw parse {_span(growth['message'])}, lazy read 1 {_span(growth['lazy'])}")
    else:
        verdict, here = Verdict.NOT_MEASURED, "needs both widths on the memory store"
    out.append(_finding("4", "width scales the decode cost; the lazy entity with few reads follows the parse",
                       "db.Model 79 → 303 ms, lazy 32 → 80 ms", "decodes 5.7–8.6×, parse about 7.5×", here, verdict))
    # 5. The protobuf runtime matters.
    runtime = [r for r in (_r(c.step("decode", s, n or 0, "model", "message", backend="python"),
                              c.step("decode", s, n or 0, "model", "message")) for s in c.schemas) if r]
    out.append(_finding("5", "the protobuf runtime matters", "pure-Python runtime much slower (a note)",
                       "about 100× on the parse", f"pure-Python ÷ upb parse: {_span(runtime)}",
                       _at_least(runtime, 10)))
    out.append(_finding("6", "db vs ndb", "db slower than ndb; db Expando doubles db", "-",
                       "db no longer exists: no column can be measured", Verdict.NOT_REPRODUCIBLE))
    return out


def _findings_table(results: Sequence[CellResult]) -> Table:
    return findings_table(
        f"entities: what {STUDY} found, checked on this machine", findings(results),
        {"id": "#", "claim": "finding", "published": "2016", "here": "this run", "verdict": "verdict"},
        notes=["reproduced: the published direction beyond noise, and at least the published lower "
               "bound where one is given (finding 3: declared Expando within 15% of Model, dynamic at "
               "least 1.5×; finding 4: decodes grow at least 4× while lazy read 1 grows no more than "
               "1.25× the parse's growth; finding 5: at least 10×); refuted: a paired ratio's interval on "
               "the wrong side of its bound; too close to call: an interval that straddles a bound. Growth "
               "with width is the paired ratio of the 100-property cell to the 10-property one."])


#: The reads a reader would choose between for a get of 20 whose every property is used: (path, read, name).
_ANSWER_PATHS = (("ndb.get", "0", "ndb.get (ndb's whole read path)"), ("datastore", "0", "datastore.Entity"),
                 ("lazy", "all", "lazy entity, every property read"), ("lazy", "materialize", "lazy entity, materialized"),
                 ("message", "dict", "raw parse + plain dict"))


@study_answer("entities")
def entities_answer(results: Sequence[CellResult], options: RunOptions) -> Answer | None:
    """The fastest way to a usable get of 20 wide entities, judged with every property read (a decode that
    reads nothing is not a choice a program can make), and its memory."""
    c = EntitiesResults(results)
    if not c.widths or not c.schemas or "memory" not in c.stores:
        return None
    n, schema = max(c.widths), c.schemas[0]
    candidates = []
    for path, read, name in _ANSWER_PATHS:
        result = c.get20("memory", schema, n, "model", path, read)
        if result is not None and result.ok:
            candidates.append(Candidate(name, result.summary("wall_ns"), None, result.median("alloc_bytes"),
                                        cell=result))
    if not candidates:
        return None
    return answer("entities", f"how to decode a get of 20 entities of {n} {schema} properties",
                  candidates, time="fastest to usable values", memory="least peak memory", lines=[
                      "a lazy entity that reads only some properties costs about the parse alone: see the read "
                      "patterns table."])


# The study sweeps the properties per entity; a chart per cell family (get20, decode, encode).
study_charts("entities", ChartPlan(sweep="n_props", group="cell"))
study_figure("entities", "decoding, encoding and a get20 from the memory store are CPU work in the worker's thread (thread CPU time); a get20 from SQLite or a server waits on it (wall time)")


@study_report("entities")
def entities_report(results: Sequence[CellResult], options: RunOptions) -> list[Table]:
    """The study's tables; they depend on the results alone."""
    return entities_tables(results)


def entities_tables(results: Sequence[CellResult]) -> list[Table]:
    """Every table of the entities suite, in the order of the module docstring."""
    c = EntitiesResults(results)
    tables = _get_tables(c)
    reads = _reads_table(c)
    if reads is not None and reads.rows:
        tables.append(reads)
    tables += _step_tables(c)
    tables.append(_targets_table(results))
    tables.append(_findings_table(results))
    return tables
