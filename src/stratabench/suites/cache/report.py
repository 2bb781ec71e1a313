"""The cache suite's tables: the article's shape, and a verdict on each of its findings.

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
remote database, as the datastore was), else MariaDB's, else SQLite's.

Verdict rules, stated once: a claim "A is X× faster than B" is
*reproduced* when A is faster beyond noise (the medians' confidence
intervals do not overlap) and by at least max(1, X/3), *within noise* when
the intervals overlap, *refuted* otherwise. "Negligible" means an absolute
difference under 1 ms per read, the unit the article judged requests in;
"about equal" means within a factor of 1.5. A finding whose cells need a
server that did not run says so, with the command that starts one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from stratabench.metrics import METRICS
from stratabench.options import RunOptions
from stratabench.report.answer import Answer, Candidate, answer, best_of
from stratabench.report.compare import BASE, Ratio, paired, ratio, ratio_text
from stratabench.report.generic import status_text
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult
from stratabench.results.stats import Summary, summarize
from stratabench.suites.kit.findings import (
    Finding,
    ResultIndex,
    Verdict,
    all_of,
    beyond,
    conclusions_table,
    findings_table,
    judge,
)
from stratabench.suites.kit.problems import problem_lines, status_summary
from stratabench.suites.kit.reports import ChartPlan, study_answer, study_charts, study_report
from stratabench.units import format_bytes, format_ns

__all__ = ["ARTICLE_CELLS", "START_SERVERS", "CacheResults", "cache_answer", "cache_tables", "findings"]

DATABASES = ("postgresql", "mariadb", "sqlite")
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
ARTICLE = "the 2011 App Engine caching article"
NEGLIGIBLE_NS = 1_000_000
BUDGET_BYTES = 50_000_000
_FMT_NS, _FMT_BYTES = METRICS["wall_ns"].format, METRICS["size_bytes"].format

Key = tuple[str, str, str, str]  # (tier label, representation, encoding, compression)


class CacheResults(ResultIndex):
    """The cache suite's results: the cell with these coordinates, and the cells of each (tier, representation,
    encoding, compression) by operation, for the tables."""

    def __init__(self, results: Sequence[CellResult]) -> None:
        keys = ("tier", "representation", "encoding", "compression", "operation")
        super().__init__(results, "cache", keys, missing=dict.fromkeys(keys, "?"))
        self.cells: dict[Key, dict[str, CellResult]] = {}
        self.kinds: dict[str, str] = {}
        for result in self.results:
            p = result.params
            key = (p.get("tier", "?"), p.get("representation", "?"), p.get("encoding", "?"), p.get("compression", "?"))
            self.cells.setdefault(key, {})[p.get("operation", "?")] = result
            self.kinds[key[0]] = p.get("kind", key[0])

    def tier_of(self, kind: str) -> str | None:
        """The label of the first tier of ``kind`` in the run (``redis``, not ``redis#2``)."""
        return kind if kind in self.kinds else next((t for t, k in self.kinds.items() if k == kind), None)

    def get(self, kind: str, rep: str, encoding: str, compression: str, operation: str) -> CellResult | None:
        tier = self.tier_of(kind)
        if tier is None:
            return None
        return self.find(tier=tier, representation=rep, encoding=encoding, compression=compression, operation=operation)

    def ok(self, kind: str, rep: str, encoding: str, compression: str, operation: str) -> CellResult | None:
        tier = self.tier_of(kind)
        if tier is None:
            return None
        return self.find_ok(tier=tier, representation=rep, encoding=encoding, compression=compression,
                            operation=operation)

    @property
    def database(self) -> str | None:
        """The baseline database kind: the first of postgresql, mariadb, sqlite with an ok rows read."""
        for kind in DATABASES:
            if self.ok(kind, "rows", "rows", "none", "get_one") or self.ok(kind, "rows", "rows", "none", "get_list"):
                return kind
        return None

    def baseline(self, operation: str) -> CellResult | None:
        kind = self.database
        return None if kind is None else self.ok(kind, "rows", "rows", "none", operation)


def cpu_total(result: CellResult | None) -> Summary | None:
    """CPU per operation of the client plus the local server's, sample by sample (the article's CPU + API CPU)."""
    if result is None or "cpu_ns" not in result.metrics:
        return None
    cpu = result.metrics["cpu_ns"].samples
    server = result.metrics.get("server_cpu_ns")
    if server is None or len(server.samples) != len(cpu):
        return result.metrics["cpu_ns"].summary
    return summarize([c + s for c, s in zip(cpu, server.samples)])


def _wall(result: CellResult | None) -> Summary | None:
    return None if result is None else result.summary("wall_ns")


def _claim(measured: Ratio | None, article: float) -> Verdict:
    # The article's factor, from 2011 hardware: a third of it, and at least "faster", counts as reproduced.
    return judge(measured, max(1.0, article / 3))


def _r(value: Ratio | None) -> str:
    return "-" if value is None else str(value)


def _faster(value: Ratio | None, word: str = "faster", opposite: str = "slower") -> str:
    """``2.3× faster`` for a ratio above 1, ``1.2× slower`` below (``~`` when within noise)."""
    if value is None:
        return "-"
    if value.value >= 1 or value.value <= 0:
        return f"{value} {word}"
    return f"{Ratio(1 / value.value, value.within_noise)} {opposite}"


def _saves(ns: float) -> str:
    return f"saves {_FMT_NS(ns)}" if ns >= 0 else f"costs {_FMT_NS(-ns)} more"


def _finding(fid: str, claim: str, article: str, here: str, verdict: Verdict, evidence: str) -> Finding:
    return Finding(fid, claim, verdict, here=here, published=article, evidence=evidence)


def _needs(kinds: Sequence[str], finding: str, claim: str, article: str, here: str = "-") -> Finding:
    return _finding(finding, claim, article, here, Verdict.NEEDS_SERVER, f"needs {' and '.join(kinds)} (see below)")


def _db_note(kind: str) -> str:
    return " (SQLite is in-process, so the remote-database gap shrinks; PostgreSQL is the closer analog)" \
        if kind == "sqlite" else ""


# -- the findings ---------------------------------------------------------------------


def _database_list_is_slow(c: CacheResults) -> Finding:
    """Judged against the remote caches only: a read from instance memory is a dict lookup, not an
    alternative the database competes with, and a ratio against it measures the lookup's noise."""
    claim, article = "datastore, list of 1,000: slow and very expensive", "≈440 ms; ≈10 s API CPU (all().fetch(1000))"
    db = c.database
    one, lst = c.baseline("get_one"), c.baseline("get_list")
    if db is None or lst is None or one is None:
        return _finding("F1", claim, article, "-", Verdict.NOT_MEASURED, "needs the rows reads of a database")
    vs_one = paired(lst, one)
    caches = [(f"{kind} {enc}", c.ok(kind, rep, enc, "none", "get_list"))
              for kind, rep, enc in (("memcached", "value", "pickle"), ("redis", "value", "pickle"))]
    measured = [(name, paired(lst, result)) for name, result in caches if result is not None]
    here = f"{db} list {_FMT_NS(lst.median('wall_ns'))}, CPU {_FMT_NS(_median(cpu_total(lst)))}"
    if not measured:
        return _finding("F1", claim, article, here, Verdict.NEEDS_SERVER,
                        "needs memcached or Redis to compare with (instance memory is a dict lookup, no "
                        "fair yardstick for a database)")
    slower_than_all = all(beyond(r, 1) for _, r in measured)
    verdict = Verdict.HOLDS if beyond(vs_one, 1) and slower_than_all else (
        Verdict.WITHIN_NOISE if vs_one is None or vs_one.within_noise else Verdict.DOES_NOT_HOLD)
    evidence = (f"the list takes {_r(vs_one)} the single read; the database's list ÷ the cache's: "
                + ", ".join(f"{name} {_r(r)}" for name, r in measured) + _db_note(db))
    return _finding("F1", claim, article, here, verdict, evidence)


def _median(summary: Summary | None) -> float | None:
    return None if summary is None else summary.median


def _memcache_beats_the_database(c: CacheResults, operation: str, fid: str, claim: str, article: str,
                     time_x: float, cpu_x: float) -> Finding:
    db, base = c.database, c.baseline(operation)
    memcached = c.ok("memcached", "value", "pickle", "none", operation)
    if c.tier_of("memcached") is None:
        return _needs(["memcached"], fid, claim, article)
    if db is None or base is None or memcached is None:
        missing = c.get("memcached", "value", "pickle", "none", operation)
        why = status_text(missing) if missing is not None and not missing.ok else "needs memcached pickle and a database's rows"
        return _finding(fid, claim, article, "-", Verdict.NOT_MEASURED, why)
    time = paired(base, memcached)
    cpu = ratio(cpu_total(base), cpu_total(memcached))
    saving = base.median("wall_ns") - memcached.median("wall_ns")  # type: ignore[operator]
    verdict = all_of(_claim(time, time_x), _claim(cpu, cpu_x))
    here = f"{_faster(time)}, {_faster(cpu, 'less CPU', 'more CPU')}, {_saves(saving)}"
    evidence = (f"{db} rows {_FMT_NS(base.median('wall_ns'))} vs memcached pickle {_FMT_NS(memcached.median('wall_ns'))}; "
                f"CPU counts the server's{_db_note(db)}")
    return _finding(fid, claim, article, here, verdict, evidence)


def _protobuf_keeps_one_costs_the_list(c: CacheResults) -> Finding:
    claim = "memcache + protobuf: single record unchanged; list slower and costlier"
    article = "single: no visible change; list 20–25% worse"
    if c.tier_of("memcached") is None:
        return _needs(["memcached"], "F4", claim, article)
    pairs = {op: (c.ok("memcached", "value", "protobuf", "none", op), c.ok("memcached", "value", "pickle", "none", op))
             for op in ("get_one", "get_list")}
    if any(a is None or b is None for a, b in pairs.values()):
        return _finding("F4", claim, article, "-", Verdict.NOT_MEASURED, "needs memcached protobuf+none and pickle+none reads")
    one = paired(pairs["get_one"][0], pairs["get_one"][1])
    lst = paired(pairs["get_list"][0], pairs["get_list"][1])
    lst_cpu = ratio(cpu_total(pairs["get_list"][0]), cpu_total(pairs["get_list"][1]))
    assert one is not None and lst is not None
    unchanged = one.within_noise or abs(one.value - 1) < 0.10
    if lst.within_noise:
        verdict = Verdict.WITHIN_NOISE
    else:
        verdict = Verdict.HOLDS if unchanged and lst.value > 1 else Verdict.DOES_NOT_HOLD
    here = f"single {one}, list {lst} (CPU {_r(lst_cpu)})"
    return _finding("F4", claim, article, here, verdict,
                   "protobuf time ÷ pickle time; modern pickle is far faster than 2011's db.Model pickling")


def _stage(result: CellResult | None, name: str) -> float:
    value = None if result is None else result.median(name)
    return 0.0 if value is None else value


def _zlib_gain_is_lost_to_decompression(c: CacheResults) -> Finding:
    claim = "memcache + protobuf + zlib: less to transfer, but decompression wipes out the gain"
    article = "single ≈1 ms faster get, lost to decompression; list ≈5% worse"
    if c.tier_of("memcached") is None:
        return _needs(["memcached"], "F5", claim, article)
    plain = {op: c.ok("memcached", "value", "protobuf", "none", op) for op in ("get_one", "get_list")}
    zlib = {op: c.ok("memcached", "value", "protobuf", "zlib", op) for op in ("get_one", "get_list")}
    if any(v is None for v in (*plain.values(), *zlib.values())):
        return _finding("F5", claim, article, "-", Verdict.NOT_MEASURED, "needs memcached protobuf+none and +zlib reads")
    one = paired(zlib["get_one"], plain["get_one"])
    lst = paired(zlib["get_list"], plain["get_list"])
    assert one is not None and lst is not None
    faster = [r for r in (one, lst) if r.value < 1 and not r.within_noise]
    if faster:
        verdict = Verdict.DOES_NOT_HOLD
    elif one.within_noise and lst.within_noise:
        verdict = Verdict.WITHIN_NOISE
    else:
        verdict = Verdict.HOLDS
    z1, p1 = zlib["get_one"], plain["get_one"]
    assert z1 is not None and p1 is not None
    request_plain = p1.median("wall_ns") - _stage(p1, "decode_ns")  # type: ignore[operator]
    request_zlib = z1.median("wall_ns") - _stage(z1, "decode_ns") - _stage(z1, "decompress_ns")  # type: ignore[operator]
    others = []
    for name in ("zstd", "lz4"):
        a, b = c.ok("memcached", "value", "protobuf", name, "get_one"), c.ok("memcached", "value", "protobuf", name, "get_list")
        if a is not None and b is not None:
            others.append(f"{name}: single {_r(paired(a, p1))}, list {_r(paired(b, plain['get_list']))}")
    here = f"single {one}, list {lst}"
    evidence = (f"single record: transfer and request {_FMT_NS(request_plain - request_zlib)} shorter, "
                f"decompression {_FMT_NS(_stage(z1, 'decompress_ns'))}" + ("; " + "; ".join(others) if others else ""))
    return _finding("F5", claim, article, here, verdict, evidence)


def _ready_vs_memcached(c: CacheResults, fid: str, claim: str, article: str,
                        operation: str) -> Finding | tuple[CellResult, CellResult]:
    """The memory-ready and memcached-pickle reads of ``operation``, or the finding that they are missing."""
    if c.tier_of("memcached") is None:
        return _needs(["memcached"], fid, claim, article)
    ready = c.ok("memory", "ready", "ready", "none", operation)
    memcached = c.ok("memcached", "value", "pickle", "none", operation)
    if ready is None or memcached is None:
        return _finding(fid, claim, article, "-", Verdict.NOT_MEASURED, f"needs memory ready and memcached pickle {operation}")
    return ready, memcached


def _memory_saves_little_on_one_record(c: CacheResults) -> Finding:
    claim, article = "instance memory, single record: negligible gain over memcache", "negligible gain"
    found = _ready_vs_memcached(c, "F6", claim, article, "get_one")
    if isinstance(found, Finding):
        return found
    ready, memcached = found
    saving = memcached.median("wall_ns") - ready.median("wall_ns")  # type: ignore[operator]
    verdict = Verdict.HOLDS if saving < NEGLIGIBLE_NS else Verdict.DOES_NOT_HOLD
    here = f"{_saves(saving)} per read ({_faster(paired(memcached, ready))})"
    return _finding("F6", claim, article, here, verdict,
                   f"negligible = under {_FMT_NS(NEGLIGIBLE_NS)} per read; the ratio is large, the time saved is not")


def _memory_list_is_far_faster(c: CacheResults) -> Finding:
    claim, article = "instance memory, list: far faster than memcache, essentially no CPU", "≈100× faster"
    found = _ready_vs_memcached(c, "F7", claim, article, "get_list")
    if isinstance(found, Finding):
        return found
    ready, memcached = found
    time = paired(memcached, ready)
    here = f"{_faster(time)}; CPU {_FMT_NS(ready.median('cpu_ns'))} vs {_FMT_NS(_median(cpu_total(memcached)))}"
    return _finding("F7", claim, article, here, _claim(time, 100), "memcached pickle time ÷ memory ready time")


def _serializing_erases_memory_advantage(c: CacheResults) -> Finding:
    claim = "instance memory + protobuf: list as slow as memcache; serialization erases local memory's advantage"
    article = "list time and CPU ≈ memcache"
    ready = c.ok("memory", "ready", "ready", "none", "get_list")
    local = c.ok("memory", "value", "protobuf", "none", "get_list")
    if ready is None or local is None:
        return _finding("F8", claim, article, "-", Verdict.NOT_MEASURED, "needs memory ready and memory protobuf list reads")
    erased = paired(local, ready)
    part = f"memory protobuf is {_r(erased)} slower than memory ready"
    if c.tier_of("memcached") is None:
        finding = _needs(["memcached"], "F8", claim, article, part)
        return _finding("F8", claim, article, part, finding.judged, finding.evidence)
    remote = c.ok("memcached", "value", "protobuf", "none", "get_list")
    if remote is None:
        return _finding("F8", claim, article, part, Verdict.NOT_MEASURED, "needs memcached protobuf list reads")
    equal = paired(remote, local)
    assert equal is not None and erased is not None
    about_equal = equal.within_noise or 1 / 1.5 <= equal.value <= 1.5
    verdict = Verdict.HOLDS if about_equal and beyond(erased, 10) else Verdict.DOES_NOT_HOLD
    return _finding("F8", claim, article, f"memcached/memory protobuf {equal}; {part}", verdict,
                   "about equal = within 1.5×; erased = at least 10× slower than ready")


def _compressed_memory_list_gains_nothing(c: CacheResults) -> Finding:
    claim = "instance memory + protobuf + zlib: still slow and expensive for the list; no benefit"
    article = "no benefit"
    ready = c.ok("memory", "ready", "ready", "none", "get_list")
    plain = c.ok("memory", "value", "protobuf", "none", "get_list")
    zlib = c.ok("memory", "value", "protobuf", "zlib", "get_list")
    if ready is None or zlib is None or plain is None:
        return _finding("F9", claim, article, "-", Verdict.NOT_MEASURED, "needs memory ready, protobuf+none and +zlib list reads")
    slow = paired(zlib, ready)
    gain = paired(zlib, plain)
    assert slow is not None and gain is not None
    no_benefit = gain.within_noise or gain.value >= 1
    verdict = Verdict.HOLDS if no_benefit and beyond(slow, 10) else Verdict.DOES_NOT_HOLD
    others = []
    for name in ("zstd", "lz4"):
        other = c.ok("memory", "value", "protobuf", name, "get_list")
        if other is not None:
            others.append(f"{name} {_r(paired(other, plain))}")
    evidence = f"vs protobuf+none: zlib {gain}" + (", " + ", ".join(others) if others else "")
    return _finding("F9", claim, article, f"{slow} slower than memory ready", verdict, evidence)


def findings(results: Sequence[CellResult]) -> list[Finding]:
    """Judge the article's nine findings on these results."""
    c = CacheResults(results)
    return [
        _database_list_is_slow(c),
        _memcache_beats_the_database(c, "get_one", "F2", "memcache vs datastore, single 60 KB record: faster and cheaper, "
                         "but only ≈10 ms saved", "≈2× faster, ≈2× less CPU, ≈10 ms saved", 2, 2),
        _memcache_beats_the_database(c, "get_list", "F3", "memcache vs datastore, list: faster, far cheaper in CPU",
                         "1.5× faster, 15× less CPU", 1.5, 15),
        _protobuf_keeps_one_costs_the_list(c), _zlib_gain_is_lost_to_decompression(c), _memory_saves_little_on_one_record(c), _memory_list_is_far_faster(c), _serializing_erases_memory_advantage(c), _compressed_memory_list_gains_nothing(c),
    ]


# -- the tables ---------------------------------------------------------------------------


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
        Column(f"{prefix}_wall", f"{title} time", "right", format_ns),
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
            f"{prefix}_wall": result.median("wall_ns"), f"{prefix}_cpu": result.median("cpu_ns"),
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
    return conclusions_table(f"cache: what {ARTICLE} concluded, checked on this machine", [
        _conclusion("caching small single objects is rarely worth the code: a direct key lookup costs "
                    "only milliseconds more", *_conclusion_small(c)),
        _conclusion("serialize and compress only for remote caches; keep instance memory ready to use",
                    *_conclusion_ready(c)),
        _conclusion("instance memory is the best place for hot, rarely changing data that fits the "
                    "budget (≈50 MB, each instance its own copy; coherence needs a scheme such as a "
                    "version stamp in memcache)", *_conclusion_memory(c)),
    ])


def _conclusion(claim: str, verdict: Verdict, evidence: str) -> Finding:
    # The article's conclusions are advice, judged in the verdicts' own words (holds / does not hold).
    return Finding("", claim, verdict, evidence=evidence, words={})


def _fastest(c: CacheResults, operation: str, keep: Callable[[Key], bool]) -> tuple[Key, CellResult] | None:
    found = [(key, cells[operation]) for key, cells in c.cells.items()
             if keep(key) and operation in cells and cells[operation].ok]
    return min(found, key=lambda item: item[1].median("wall_ns") or float("inf")) if found else None


def _conclusion_small(c: CacheResults) -> tuple[Verdict, str]:
    base = c.baseline("get_one")
    best = _fastest(c, "get_one", lambda key: key[1] in ("ready", "value"))
    if base is None or best is None:
        return Verdict.NOT_MEASURED, "needs a database's rows read and a cache read of the article"
    extra = base.median("wall_ns") - best[1].median("wall_ns")  # type: ignore[operator]
    holds = extra < 5 * NEGLIGIBLE_NS
    return Verdict.HOLDS if holds else Verdict.DOES_NOT_HOLD, (
        f"{c.database} key lookup costs {_FMT_NS(extra)} more than the fastest cache "
        f"({best[0][0]} {best[0][2]})" + _db_note(c.database or ""))


def _conclusion_ready(c: CacheResults) -> tuple[Verdict, str]:
    parts, holds = [], True
    for operation in ("get_one", "get_list"):
        ready = c.ok("memory", "ready", "ready", "none", operation)
        other = _fastest(c, operation, lambda key: c.kinds.get(key[0]) == "memory" and key[1] == "value")
        if ready is None or other is None:
            return Verdict.NOT_MEASURED, "needs memory ready and memory codec reads"
        r = paired(other[1], ready)
        holds = holds and beyond(r, 1)
        parts.append(f"{operation}: fastest serialized memory cell ({other[0][2]}+{other[0][3]}) is {_r(r)} ready's time")
    return Verdict.HOLDS if holds else Verdict.DOES_NOT_HOLD, "; ".join(parts)


def _conclusion_memory(c: CacheResults) -> tuple[Verdict, str]:
    parts, holds = [], True
    for operation in ("get_one", "get_list"):
        best = _fastest(c, operation, lambda key: True)
        if best is None:
            return Verdict.NOT_MEASURED, "no reads measured"
        holds = holds and best[0][1] == "ready"
        parts.append(f"fastest {operation}: {best[0][0]} {best[0][2]}")
    ready = c.ok("memory", "ready", "ready", "none", "get_list")
    held = None if ready is None else ready.median("retained_bytes")
    if held is not None:
        parts.append(f"the list holds {_FMT_BYTES(held)} ({held / BUDGET_BYTES:.1%} of 50 MB)")
    return Verdict.HOLDS if holds else Verdict.DOES_NOT_HOLD, "; ".join(parts)


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
