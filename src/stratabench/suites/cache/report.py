"""The cache suite's tables: the article's shape, and the verdicts of :mod:`.claims` on its findings.

Tables:

1. **Reads**, shaped like the article: rows tier × encoding × compression,
   the article's seven cells first (placeholders saying which server they
   need when it is absent), then the modern extras; for the single record
   and for the list, time, CPU, server CPU, bytes stored and the ratio to
   the database baseline.
2. **Writes**: ``set_one`` and ``set_list`` the same way.
3. **What instance memory holds**: the footprint of each memory-tier entry
   against the article's 50 MB instance budget.
4. **Findings F1–F9**: the article's figure, ours, and a verdict.
5. **Conclusions**: the article's three, with our verdict.

The database baseline is PostgreSQL's ``rows`` cells when measured (a
remote database, as the datastore was), else MariaDB's, else SQLite's
(:attr:`.claims.CacheResults.database`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratabench.metrics import METRICS
from stratabench.options import RunOptions
from stratabench.report.answer import Answer, Candidate, answer, best_of
from stratabench.report.compare import BASE, paired, ratio_text
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult
from stratabench.suites.kit.findings import Finding, Verdict, conclusions_table, findings_table
from stratabench.suites.kit.problems import problem_lines, status_summary
from stratabench.suites.kit.reports import ChartPlan, study_answer, study_charts, study_figure, study_report
from stratabench.units import format_bytes, format_ns
from stratabench.suites.cache.claims import ARTICLE, BUDGET_BYTES, CacheResults, Key, conclusions, findings, wall

__all__ = ["ARTICLE_CELLS", "START_SERVERS", "cache_answer", "cache_tables"]

_FMT_NS, _FMT_BYTES = METRICS["wall_ns"].format, METRICS["size_bytes"].format
#: The article's cells in its order: (label, tier kind, representation, encoding, compression).
ARTICLE_CELLS: tuple[tuple[str, str, str, str, str], ...] = (
    ("memcache", "memcached", "value", "pickle", "none"),
    ("memcache + protobuf", "memcached", "value", "protobuf", "none"),
    ("memcache + protobuf + zlib", "memcached", "value", "protobuf", "zlib"),
    ("instance memory", "memory", "ready", "ready", "none"),
    ("instance memory + protobuf", "memory", "value", "protobuf", "none"),
    ("instance memory + protobuf + zlib", "memory", "value", "protobuf", "zlib"),
)
START_SERVERS = (
    "start them with `stratabench run cache --services local` (private servers for this run), or "
    "`stratabench services up memcached redis postgresql` and pass the URLs that "
    "`stratabench services status --show-passwords` prints with --store"
)


def _ordered_keys(c: CacheResults) -> list[tuple[str, Key | None, str | None]]:
    """(article label, key or None for a placeholder, placeholder tier kind) in the article's order, then extras."""
    rows: list[tuple[str, Key | None, str | None]] = []
    used: set[Key] = set()
    for kind in ("sqlite", "postgresql", "mariadb"):
        tier = c.tier_of(kind)
        if tier is not None and (tier, "rows", "rows", "none") in c.cells:
            rows.append(("datastore", (tier, "rows", "rows", "none"), None))
            used.add((tier, "rows", "rows", "none"))
    for label, kind, rep, encoding, compression in ARTICLE_CELLS:
        tier = c.tier_of(kind)
        key = None if tier is None else (tier, rep, encoding, compression)
        if key is not None and key in c.cells:
            rows.append((label, key, None))
            used.add(key)
        elif tier is None and kind not in ("memory", "sqlite"):  # the embedded tiers were left out on purpose
            rows.append((label, None, kind))
    rows += [("", key, None) for key in c.cells if key not in used]
    return rows


def _op_columns(prefix: str, title: str) -> list[Column]:
    return [
        Column(f"{prefix}wall", f"{title} time", "right", format_ns),
        Column(f"{prefix}_cpu", f"{title} CPU", "right", format_ns, priority=2),
        Column(f"{prefix}_server", f"{title} server CPU", "right", format_ns, priority=3),
        Column(f"{prefix}_size", f"{title} size", "right", format_bytes, priority=2),
        Column(f"{prefix}_vs", f"{title} vs db", "right", ratio_text, priority=1),
    ]


def _op_values(prefix: str, result: CellResult | None, base: CellResult | None) -> dict[str, Any]:
    if result is None:
        return {}
    values: dict[str, Any] = {f"{prefix}_size": result.median("size_bytes")}
    if result.ok:
        values.update({
            f"{prefix}wall": result.median("wall_ns"), f"{prefix}_cpu": result.median("cpu_ns"),
            f"{prefix}_server": result.median("server_cpu_ns"),
            # A ready read decodes nothing: its ratio to the database would measure a dict lookup's noise.
            f"{prefix}_vs": BASE if result is base else (
                paired(result, base)
                if base is not None and result.params.get("representation") != "ready" else None),
        })
    return values


def _label_columns() -> list[Column]:
    return [Column("cell", "cache"), Column("tier", "tier", priority=4), Column("encoding", "encoding", priority=4),
            Column("compression", "compression", priority=4)]


def _label(label: str, key: Key | None, kind: str | None) -> dict[str, Any]:
    """The row's name: the article's own for its cells, else tier, encoding and compression in a few words."""
    if key is None:
        return {"cell": label, "tier": kind, "encoding": "-", "compression": "-"}
    tier, rep, encoding, compression = key
    shown = f"blob {encoding}" if rep == "blob" else encoding
    packed = "-" if rep in ("ready", "rows") else compression
    name = label or " + ".join(part for part in (tier, shown if rep != "ready" else "objects",
                                                  packed if packed not in ("-", "none") else "") if part)
    return {"cell": name, "tier": tier, "encoding": shown, "compression": packed}


def _reads_table(c: CacheResults, options: RunOptions) -> Table:
    db = c.database
    columns = [*_label_columns(), *_op_columns("one", "one"), *_op_columns("list", "list"),
               Column("status", "status")]
    sizes = sorted({int(r.params.get("size", 0)) for r in c.results if r.params.get("dataset") == "comments"})
    table = Table(f"cache: reads, shaped like the article (one 60 KB article; a list of "
                  f"{'/'.join(f'{s:,}' for s in sizes) or '1,000'} comments as one entry)", columns)
    base_one, base_list = c.baseline("get_one"), c.baseline("get_list")
    for label, key, kind in _ordered_keys(c):
        row = _label(label, key, kind)
        if key is None:
            row["status"] = f"not measured: needs {kind}"
            table.rows.append(row)
            continue
        cells = c.cells[key]
        if "get_one" not in cells and "get_list" not in cells:
            continue
        row.update(_op_values("one", cells.get("get_one"), base_one))
        row.update(_op_values("list", cells.get("get_list"), base_list))
        row["status"] = status_summary(cells, ("get_one", "get_list"))
        table.rows.append(row)
    table.notes = [
        "one: the 60 KB article; list: the list of comments. time: median wall time per read; CPU: this "
        "process; server CPU: the local server's processes (- where the server is in-process or not known); "
        "size: bytes stored (rows: the rows' payloads).",
        f"vs db: time ÷ the {db or 'database'} rows time for the same read (below 1× is faster; none for "
        "instance memory's ready objects, whose read is a dict lookup); ~ marks a "
        "difference within noise. Every read hands back the same records and was checked against the dataset's hash.",
    ]
    table.notes += _compression_notes(c)
    missing = [kind for kind in ("memcached", "redis", "postgresql") if c.tier_of(kind) is None]
    if missing:
        table.notes.append(f"not measured here: {', '.join(missing)} (no server); {START_SERVERS}.")
    return table


def _compression_notes(c: CacheResults) -> list[str]:
    """The compression ratios this run achieved, per dataset, for the first codec measured."""
    notes = []
    for operation, dataset in (("get_one", "article"), ("get_list", "comments")):
        sizes: dict[tuple[str, str], float] = {}
        for (tier, rep, encoding, compression), cells in c.cells.items():
            result = cells.get(operation) or cells.get(operation.replace("get", "set"))
            if rep in ("value", "blob") and result is not None and result.median("size_bytes"):
                sizes.setdefault((encoding, compression), result.median("size_bytes"))  # type: ignore[arg-type]
        codecs = list(dict.fromkeys(encoding for encoding, _ in sizes))
        parts = []
        for codec in codecs:
            plain = sizes.get((codec, "none"))
            ratios = [f"{name} {plain / size:.2f}×" for (enc, name), size in sizes.items()
                      if enc == codec and name != "none" and plain]
            if plain and ratios:
                parts.append(f"{codec} {_FMT_BYTES(plain)}: {', '.join(ratios)}")
        if parts:
            notes.append(f"compression achieved on the {dataset}: " + "; ".join(parts[:3]))
    return notes


def _writes_table(c: CacheResults) -> Table | None:
    if not any(op in cells for cells in c.cells.values() for op in ("set_one", "set_list")):
        return None
    columns = [*_label_columns(), *_op_columns("one", "write one"), *_op_columns("list", "write list"),
               Column("status", "status")]
    table = Table("cache: writes (encode, compress, send; on a database, an upsert in one transaction)", columns)
    base_one = c.get(c.database or "", "rows", "rows", "none", "set_one")
    base_list = c.get(c.database or "", "rows", "rows", "none", "set_list")
    for label, key, kind in _ordered_keys(c):
        if key is None:
            continue
        cells = c.cells[key]
        if "set_one" not in cells and "set_list" not in cells:
            continue
        row = _label(label, key, kind)
        row.update(_op_values("one", cells.get("set_one"), base_one if base_one and base_one.ok else None))
        row.update(_op_values("list", cells.get("set_list"), base_list if base_list and base_list.ok else None))
        row["status"] = status_summary(cells, ("set_one", "set_list"))
        table.rows.append(row)
    table.notes = [
        "The article's one database write: adding 1,000 records to the high-replication datastore cost up to "
        "561,000 API CPU milliseconds; set_list on a database tier is the batched insert of as many rows.",
    ]
    return table


def _memory_table(c: CacheResults) -> Table | None:
    keys = [key for key in c.cells if c.kinds.get(key[0]) == "memory"]
    if not keys:
        return None
    table = Table("cache: what instance memory holds (the article's budget: about 50 MB per instance)", [
        Column("encoding", "encoding"), Column("compression", "compression"),
        Column("article", "article entry", "right", format_bytes), Column("list", "list entry", "right", format_bytes),
        Column("share", "list share of 50 MB", "right", lambda v: "-" if v is None else f"{v:.2%}"),
    ])
    for key in keys:
        cells = c.cells[key]
        held = {dataset: next((r.median("retained_bytes") for op, r in cells.items()
                               if r.ok and r.params.get("dataset") == dataset and r.median("retained_bytes") is not None),
                              None) for dataset in ("article", "comments")}
        row = _label("", key, None)
        row.update(article=held["article"], list=held["comments"],
                   share=None if held["comments"] is None else held["comments"] / BUDGET_BYTES)
        table.rows.append(row)
    table.notes = ["ready: the records as Python objects (tracemalloc footprint of a private copy); "
                   "others: the stored bytes object. Each instance holds its own copy."]
    return table


def _findings_table(found: list[Finding]) -> Table:
    needing = [f.id for f in found if f.judged is Verdict.NEEDS_SERVER]
    notes = ["reproduced: faster beyond noise and by at least a third of the article's factor; "
             "too close to call: the interval of the paired ratio (the median of per-round ratios of two cells "
             "measured back to back) includes 1; negligible: under 1 ms per read.",
             "verdicts use wall time: a read from memcached, Redis or the database waits on a socket and another "
             "process, whose time is part of the cost and which the reader's CPU time would leave out."]
    if needing:
        notes.append(f"{', '.join(needing)} need a memcached server: {START_SERVERS}.")
    return findings_table(f"cache: what {ARTICLE} found, checked on this machine", found,
                          {"id": "id", "claim": "the article's finding", "published": "article", "here": "here",
                           "verdict": "verdict"}, keys={"published": "article"}, evidence_notes=True, notes=notes)


def _conclusions_table(c: CacheResults) -> Table:
    return conclusions_table(f"cache: what {ARTICLE} concluded, checked on this machine", conclusions(c))



@study_answer("cache")
def cache_answer(results: Sequence[CellResult], options: RunOptions) -> Answer | None:
    """Where to keep the list of comments (and the single article), in what form: time, bytes, memory held."""
    c = CacheResults(results)
    candidates = {operation: [] for operation in ("get_one", "get_list")}  # type: dict[str, list[Candidate]]
    for label, key, kind in _ordered_keys(c):
        if key is None:
            continue
        name = _label(label, key, kind)["cell"]
        for operation in candidates:
            result = c.cells[key].get(operation)
            if result is not None and result.ok:
                memory = result.median("retained_bytes") if c.kinds.get(key[0]) == "memory" else None
                # Ready objects in instance memory: a read is a dict lookup that decodes nothing, no rival
                # to time against; its cost is the memory it holds (said in a line below).
                time = None if key[1] == "ready" else result.summary("wall_ns")
                candidates[operation].append(Candidate(name, time, result.median("size_bytes"), memory, cell=result))
    if not candidates["get_list"] and not candidates["get_one"]:
        return None
    found = answer("cache", "where to cache a list of records, and in what form", candidates["get_list"],
                    time="fastest list read", size="smallest list stored",
                    memory="least instance memory for the list")
    one = best_of("time", "fastest single-record read", candidates["get_one"])
    if one is not None:
        found.bests.insert(1, one)
    ready = c.ok("memory", "ready", "ready", "none", "get_list")
    if ready is not None:
        held = ready.median("retained_bytes")
        found.lines.append(
            f"instance memory holding ready objects is fastest by construction: a read is a dict lookup "
            f"({_FMT_NS(ready.median('wall_ns'))}) that decodes nothing; its cost is memory"
            + (f" ({_FMT_BYTES(held)} held for the list, in every instance)" if held else "")
            + " and keeping each instance's copy current.")
    missing = [kind for kind in ("memcached", "redis", "postgresql") if c.tier_of(kind) is None]
    if missing:
        found.lines.append(f"not measured: {', '.join(missing)} (no server in this run); add them with "
                           "--services local")
    return found


study_charts("cache", ChartPlan(group="operation"))  # a get and a set answer different questions: a chart each
study_figure("cache", "a read from this process's memory is CPU work, judged on the thread's CPU time; a read from SQLite or a server waits on a file or another process, which is part of what the study asks, so those cells, and every ratio against one, are judged on wall time")


@study_report("cache")
def cache_tables(results: Sequence[CellResult], options: RunOptions) -> list[Table]:
    """Every table of the cache suite for these results."""
    c = CacheResults(results)
    reads = _reads_table(c, options)
    reads.notes += problem_lines(c.results)
    tables = [reads]
    for extra in (_writes_table(c), _memory_table(c)):
        if extra is not None:
            tables.append(extra)
    tables += [_findings_table(findings(results)), _conclusions_table(c)]
    return tables
