"""The cache study's findings: F1–F9 and the article's three conclusions, judged on this run's cells.

:class:`CacheResults` indexes the cells; :func:`findings` judges the
article's findings (docs/studies/cache.md §6) and :func:`conclusions` its
conclusions; :mod:`.report` lays them out in tables beside the article's
shape.

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

from stratabench.metrics import METRICS
from stratabench.report.compare import Ratio, paired, ratio
from stratabench.report.generic import status_text
from stratabench.results.records import CellResult
from stratabench.results.stats import Summary, summarize
from stratabench.suites.kit.findings import Finding, ResultIndex, Verdict, all_of, beyond, judge

__all__ = ["ARTICLE", "BUDGET_BYTES", "DATABASES", "NEGLIGIBLE_NS", "CacheResults", "Key", "conclusions", "cpu_total",
           "findings", "wall"]

DATABASES = ("postgresql", "mariadb", "sqlite")
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


def wall(result: CellResult | None) -> Summary | None:
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


def conclusions(c: CacheResults) -> list[Finding]:
    """The article's three conclusions (docs/studies/cache.md §6), each with this run's verdict."""
    return [
        _conclusion("caching small single objects is rarely worth the code: a direct key lookup costs "
                    "only milliseconds more", *_conclusion_small(c)),
        _conclusion("serialize and compress only for remote caches; keep instance memory ready to use",
                    *_conclusion_ready(c)),
        _conclusion("instance memory is the best place for hot, rarely changing data that fits the "
                    "budget (≈50 MB, each instance its own copy; coherence needs a scheme such as a "
                    "version stamp in memcache)", *_conclusion_memory(c)),
    ]
