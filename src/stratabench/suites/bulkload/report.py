"""The bulkload suite's report: the answer, every format, the study's published figures beside ours, its conclusions.

The study reproduced is t-yaegashi/goddbench (Go, 2018): a reader sees its
name, never an internal nickname for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratabench.datasets import bulkload as dataset
from stratabench.metrics import METRICS
from stratabench.options import RunOptions
from stratabench.report.answer import Answer, Candidate, answer, frontier
from stratabench.report.compare import BASE, paired, ratio_text
from stratabench.report.generic import status_text
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult
from stratabench.report.charts import ChartPlan
from stratabench.suites.bulkload.suite import (ACCESS, ENCODE, GO_FORMATS, GO_MORE_FORMATS, LOAD, READ, STUDY_SIZE,
                                               size_of)
from stratabench.suites.kit.findings import Finding, Verdict, beyond, conclusions_table as kit_conclusions_table
from stratabench.suites.kit.reports import study_answer, study_charts, study_figure, study_report
from stratabench.units import format_count

__all__ = ["PUBLISHED", "RESIDENT", "bulkload_answer", "bulkload_tables", "conclusions_table", "fair", "role"]

#: The study's published figures: format → (loops, ns/op, B/op, allocs/op).
PUBLISHED: dict[str, dict[str, tuple[int, float, int, int] | None]] = {
    "dev_appserver (n1-standard-1)": {
        "embed": (2_000_000_000, 0.36, 0, 0),
        "gob": (20, 59_716_073, 20_654_066, 100_237),
        "json": (2, 524_417_147, 85_308_624, 400_024),
        "msgp": (20, 74_252_328, 17_230_405, 200_005),
        "msgpack": (10, 175_795_553, 14_219_875, 700_012),
    },
    "App Engine us-central": {
        "embed": None,  # precompilation timed out: could not be deployed
        "gob": (10, 176_936_904, 45_133_789, 109_994),
        "json": (1, 1_467_064_292, 152_637_112, 418_667),
        "msgp": (5, 261_154_645, 46_860_164, 239_570),
        "msgpack": (3, 423_261_986, 42_541_709, 723_842),
    },
    "App Engine asia-northeast1": {
        "embed": (2_000_000_000, 0.45, 0, 0),
        "gob": (10, 129_381_925, 45_133_789, 109_994),
        "json": (2, 707_772_450, 125_792_668, 416_212),
        "msgp": (10, 145_570_381, 46_859_890, 239_569),
        "msgpack": (5, 271_111_025, 42_541_668, 723_841),
    },
}


SHORT_PLACE = dict(zip(PUBLISHED, ("dev", "us-central", "asia-ne1")))



#: Loads that are not a load: the records are already resident, so the "load" returns a reference.
#: Their cost moved to the build; a ratio against them would only measure a pointer return's noise.
RESIDENT = ("embed/resident", "go embed/warm", "go embed/fresh")
BY = "t-yaegashi/goddbench (Go, 2018)"


def _is_resident(result: CellResult) -> bool:
    return result.cell in RESIDENT


def _lazy(results: Sequence[CellResult]) -> set[tuple[str, str]]:
    """(codec, mode) of the lazy formats: those with a "read every field" row."""
    return {(str(r.params.get("codec")), str(r.params.get("mode"))) for r in results if r.params.get("step") == READ}


def role(result: CellResult, lazy: set[tuple[str, str]]) -> str:
    """What a row measures: ``encode``; a fair ``load`` (every field read: an eager decode, a lazy
    format's ``read`` row, a Go load); a lazy format's ``parse`` or ``access``; or ``no load``."""
    if result.params.get("direction") == ENCODE or result.params.get("variant") == ENCODE:
        return ENCODE
    if _is_resident(result):
        return "no load"
    step = result.params.get("step")
    if step == ACCESS:
        return ACCESS
    if step is None and (str(result.params.get("codec")), str(result.params.get("mode"))) in lazy:
        return "parse"
    return LOAD


def fair(results: Sequence[CellResult]) -> list[CellResult]:
    """The rows every format can be held to: encodes, and loads that read every field (no parse-only,
    access-only or resident rows: they do less work or none)."""
    lazy = _lazy(results)
    return [r for r in results if role(r, lazy) in (LOAD, ENCODE)]


study_charts("bulkload", ChartPlan(group="direction", compared=lambda cells: fair(cells)))
study_figure("bulkload", "reading an asset from the page cache and decoding it, or encoding records, is work in the worker's own thread, so its CPU time is the truth where a shared host takes the CPU away, except Parquet's, whose reader decodes on pyarrow's thread pool (wall time); the Go cells run in a process of their own and are timed there (wall time)")


@study_report("bulkload")
def bulkload_tables(results: Sequence[CellResult], options: RunOptions) -> list[Table]:
    """The three tables of the study, from its cells' results."""
    size = _size(results, options)
    seed = dataset.DEFAULT_SEED if options.seed is None else options.seed
    return [_main_table(results, seed), _published_table(results, size), conclusions_table(results)]


def _size(results: Sequence[CellResult], options: RunOptions) -> int:
    """The records the cells loaded (a report of a stored file has no run options to say it), else the run's."""
    sizes = {r.params["size"] for r in results if isinstance(r.params.get("size"), int)}
    return sizes.pop() if len(sizes) == 1 else size_of(options)


def _build_cost(results: Sequence[CellResult]) -> list[str]:
    """Where a resident load's cost went: one line per language, from its build's measurements."""
    lines = []
    fmt = {name: METRICS[name].format for name in METRICS}
    go = next((r for r in results if r.cell.startswith("go embed") and r.median("compile_ns") is not None), None)
    if go is not None:
        costs = [f"{what} {fmt[name](go.median(name))}" for name, what in (
            ("compile_ns", "compile"), ("compile_peak_rss_bytes", "peak compiler memory"),
            ("binary_size_bytes", "binary"), ("init_ns", "package init")) if go.median(name) is not None]
        lines.append("Go embed: free at load time (the records are compiled into the program, so a load returns "
                      f"a reference); the cost moved to the build: {', '.join(costs)}.")
    resident = next((r for r in results if r.cell == "embed/resident" and r.ok), None)
    compiled = next((r for r in results if r.cell == "embed/compile" and r.ok), None)
    if resident is not None:
        cost = "" if compiled is None else (
            f": compiling the module takes {fmt['wall_ns'](compiled.median('wall_ns'))}"
            + (f" and {fmt['alloc_bytes'](compiled.median('alloc_bytes'))} at its peak"
               if compiled.median("alloc_bytes") is not None else "") + " (embed/compile)")
        lines.append("Python embed/resident: free at load time (the module is already imported, so a load "
                     f"returns a reference); the cost moved to the build{cost}.")
    return lines


@study_answer("bulkload")
def bulkload_answer(results: Sequence[CellResult], options: RunOptions) -> Answer | None:
    """Per language: the fastest load and encode, the smallest encoding and the least memory; loads
    compared on reading every field (a lazy format's parse alone is no load)."""
    rows = [r for r in fair(results) if r.ok and "<-" not in r.cell and r.params.get("variant") != "fresh"]
    loads = [r for r in rows if r.params.get("direction") != ENCODE and r.params.get("variant") != ENCODE]
    if not loads:
        return None
    encodes = [r for r in rows if r not in loads]
    size = _size(results, options)
    result = Answer("bulkload", f"which format encodes and loads {size:,} records best")
    for language, memory, memory_label in (("python", "alloc_bytes", "least peak memory"),
                                           ("go", "alloc_total_bytes", "fewest bytes allocated")):
        name = "Python" if language == "python" else "Go"
        own = [Candidate(_label(r), r.summary("wall_ns"), r.median("size_bytes"), r.median(memory), cell=r)
               for r in loads if r.language == language]
        if not own:
            continue
        result.bests += answer("bulkload", "", own, time=f"fastest load, {name}", size=f"smallest, {name}",
                               memory=f"{memory_label} loading, {name}").bests
        written = [Candidate(_label(r), r.summary("wall_ns"), cell=r) for r in encodes if r.language == language]
        result.bests += answer("bulkload", "", written, time=f"fastest encode, {name}").bests
    result.frontier = frontier([Candidate(_label(r), r.summary("wall_ns"), r.median("size_bytes"), cell=r) for r in loads])
    result.lines = _zstd_line(loads) + _lazy_lines(results) + _build_cost(results)
    return result


def _label(result: CellResult) -> str:
    """A lazy format's read row by the format's name: it is the format's load, every field read."""
    return result.cell.removesuffix(f" {READ}")


def _zstd_line(loads: Sequence[CellResult]) -> list[str]:
    """The smallest after compression, which can differ from the smallest raw."""
    sized = [r for r in loads if r.median("size_zstd_bytes") is not None]
    if not sized:
        return []
    best = min(sized, key=lambda r: r.median("size_zstd_bytes") or 0)
    fmt = METRICS["size_bytes"].format
    return [f"smallest after zstd: {_label(best)} ({fmt(best.median('size_zstd_bytes'))} from "
            f"{fmt(best.median('size_bytes'))}); every row's zstd and lz4 sizes are in the table."]


def _lazy_lines(results: Sequence[CellResult]) -> list[str]:
    """How a lazy format's three rows compare: its load is the read of every field, not its parse."""
    fmt = METRICS["wall_ns"].format
    lines = []
    by_name = {r.cell: r for r in results if r.ok}
    for codec, mode in sorted(_lazy(results)):
        parse, access, read = (by_name.get(f"{codec}/{mode}{suffix}") for suffix in ("", f" {ACCESS}", f" {READ}"))
        if parse is None or read is None:
            continue
        lines.append(f"{codec}/{mode} decodes lazily: parse {fmt(parse.median('wall_ns'))}"
                     + (f", one field of every record {fmt(access.median('wall_ns'))}" if access else "")
                     + f", every field {fmt(read.median('wall_ns'))}: compared on every field.")
    return lines


def _main_table(results: Sequence[CellResult], seed: int) -> Table:
    fmt = {name: METRICS[name].format for name in METRICS}
    columns = [
        Column("name", "format"), Column("lang", "lang", priority=3), Column("loops", "loops", "right", format_count, priority=5),
        Column("wall_ns", "time", "right", fmt["wall_ns"]),
        Column("vs_json", "vs json", "right", ratio_text),
        Column("alloc_total_bytes", "Go allocated", "right", fmt["alloc_total_bytes"], priority=2),
        Column("allocs_total", "Go allocations", "right", format_count, priority=3),
        Column("alloc_bytes", "Py peak", "right", fmt["alloc_bytes"], priority=2),
        Column("retained_bytes", "Py retained", "right", fmt["retained_bytes"], priority=3),
        Column("allocs", "Py live blocks", "right", format_count, priority=4),
        Column("size_bytes", "size", "right", fmt["size_bytes"], priority=1),
        Column("size_zstd_bytes", "zstd", "right", fmt["size_zstd_bytes"], priority=2),
        Column("size_lz4_bytes", "lz4", "right", fmt["size_lz4_bytes"], priority=3),
        Column("status", "status"),
    ]
    sizes = sorted({int(r.params.get("size", 0)) for r in results})
    table = Table(f"bulkload: every format encoding and loading {'/'.join(f'{s:,}' for s in sizes)} records "
                  f"(dataset seed {seed}), Go and Python", columns, sortable=True)
    lazy = _lazy(results)
    # Each row against json in its own language and direction.
    baseline = {
        ("go", LOAD): next((r for r in results if r.cell == "go json/warm" and r.ok), None),
        ("go", ENCODE): next((r for r in results if r.cell == "go json/encode" and r.ok), None),
        ("python", LOAD): next((r for r in results if r.cell == "json/typed" and r.ok), None),
        ("python", ENCODE): next((r for r in results if r.cell == "json/typed encode" and r.ok), None),
    }
    go_order = GO_FORMATS + GO_MORE_FORMATS

    def order(result: CellResult) -> tuple[int, int, str]:
        if result.language == "go":
            fmt_name = result.params.get("format", "")
            index = go_order.index(fmt_name) if fmt_name in go_order else len(go_order)
            return (0, index, "")  # variants keep the order they ran in
        return (1, 0, "")  # Python rows keep the order they ran in

    for result in sorted(results, key=order):
        what = role(result, lazy)
        base = baseline.get((result.language, ENCODE if what == ENCODE else LOAD))
        # A parse-only, one-field or resident row does less than a load: no ratio against one.
        comparable = base is not None and result.ok and what in (LOAD, ENCODE)
        row: dict[str, Any] = {
            "name": result.cell, "lang": result.language, "loops": result.loops,
            "status": {"no load": "no load: see below", "parse": "parse only: see below",
                       ACCESS: "one field: see below"}.get(what, "") if result.ok and what not in (LOAD, ENCODE)
            else status_text(result),
            "vs_json": BASE if result is base else (
                paired(result, base) if comparable and base else None),
        }
        for name in ("wall_ns", "alloc_total_bytes", "allocs_total", "alloc_bytes", "retained_bytes", "allocs",
                     "size_bytes", "size_zstd_bytes", "size_lz4_bytes"):
            row[name] = result.median(name)
        table.rows.append(row)
    hashes = sorted({r.integrity.expected for r in results if r.integrity})
    wrong = [r.cell for r in results if r.integrity is not None and not r.integrity.ok]
    table.notes = [
        ("every format returned exactly the records that went in" if not wrong else
         f"returned other records than went in: {', '.join(wrong)}") +
        (f" (canonical hash {', '.join(h[:12] for h in hashes)})" if hashes else ""),
        "time: median per load (or encode) of every record. vs json: time ÷ json's in the same language and "
        "direction (go json/warm, go json/encode, json/typed, json/typed encode); ~ marks a difference within noise.",
        "a Go load decodes into typed records, every field read; a Python row without a suffix loads with its codec "
        "(raw: the codec's own objects, typed: tuples or Structs with integer-nanosecond time); encode rows turn the "
        "records into bytes in memory and are checked by decoding what they wrote.",
        "size: the encoded asset; zstd (level 3) and lz4 (frame, default level): the same bytes compressed.",
        "memory: Go counts every byte allocated, garbage included; Python's peak, retained and live blocks come "
        "from a tracemalloc pass: different measures, so different columns.",
    ]
    table.notes += _build_cost(results)
    if lazy:
        table.notes.append(
            "lazy formats (" + ", ".join(sorted(f"{c}/{m}" for c, m in lazy)) + ") have three rows: the parse alone "
            "(no suffix), one field of every record (access) and every field (read), which is the row the answer "
            "and the chart compare; a parse-only row's memory can live outside tracemalloc's sight (upb's arena, "
            "Arrow's buffers)."
        )
    return table


def _published_table(results: Sequence[CellResult], size: int) -> Table:
    fmt = METRICS["wall_ns"].format
    places = list(PUBLISHED)
    columns = [Column("format", "format")]
    columns += [Column(place, f"{SHORT_PLACE[place]} time", "right", fmt, priority=0 if i == 0 else 2)
                for i, place in enumerate(places)]
    columns += [Column("ours_warm", "here warm", "right", fmt),
                Column("ours_fresh", "here fresh", "right", fmt, priority=1),
                Column("published_b", "dev allocated", "right", METRICS["alloc_total_bytes"].format, priority=1),
                Column("ours_b", "here allocated", "right", METRICS["alloc_total_bytes"].format, priority=1),
                Column("published_allocs", "dev allocations", "right", format_count, priority=3),
                Column("ours_allocs", "here allocations", "right", format_count, priority=3)]
    table = Table(f"bulkload: the figures {BY} published (100,000 records, Go 1.8) beside this machine", columns)
    go = {r.cell: r for r in results if r.language == "go" and r.ok}
    for go_format in GO_FORMATS:
        row: dict[str, Any] = {"format": go_format}
        for place in places:
            figures = PUBLISHED[place][go_format]
            row[place] = None if figures is None else figures[1]
        dev = PUBLISHED[places[0]][go_format]
        warm, fresh = go.get(f"go {go_format}/warm"), go.get(f"go {go_format}/fresh")
        row.update(
            ours_warm=warm.median("wall_ns") if warm else None,
            ours_fresh=fresh.median("wall_ns") if fresh else None,
            published_b=dev[2] if dev else None, published_allocs=dev[3] if dev else None,
            ours_b=warm.median("alloc_total_bytes") if warm else None,
            ours_allocs=warm.median("allocs_total") if warm else None,
        )
        table.rows.append(row)
    table.notes = [f"{SHORT_PLACE[p]} = {p}" for p in places]
    table.notes.append("here = this machine, this run (warm: loading into the same destination each time, as the "
                       "study did; fresh: an empty destination each load).")
    table.notes.append("us-central could not deploy embed: App Engine's precompilation timed out.")
    if size != STUDY_SIZE:
        table.notes.append(f"this run loaded {size:,} records, not the study's {STUDY_SIZE:,}: compare the shapes "
                           "(each format against json), not the times (stratabench run bulkload --full loads "
                           f"{STUDY_SIZE:,}).")
    return table


def conclusions_table(results: Sequence[CellResult]) -> Table:
    """The study's four conclusions, each judged on the warm Go rows of this run."""
    go = {str(r.params.get("format")): r for r in results if r.language == "go" and r.params.get("variant") == "warm"}
    return kit_conclusions_table(f"bulkload: what {BY} concluded, checked on this machine", [
        _embed_is_fastest_but_may_not_build(go),
        _json_is_slowest_and_heaviest(go),
        _gob_beats_msgp(go),
        Finding("", "json, gob and msgpack need no code generation; msgp needs a generator step",
                Verdict.BY_CONSTRUCTION,
                evidence="by design: msgp decodes with methods its generator writes; json, gob and msgpack use "
                "reflection"),
    ], notes=["verdicts compare medians of the warm loads (the study's own way of loading) from this run; "
              "too close to call: the confidence intervals overlap. Results depend on the Go version."])


def _embed_is_fastest_but_may_not_build(go: dict[str, CellResult]) -> Finding:
    """Embed's load returns data already in memory: it is fastest by construction, and its cost is the build."""
    claim = "embedding the data in source is by far the fastest load, but huge sources can fail to build"
    embed = go.get("embed")
    if embed is None:
        return Finding("", claim, Verdict.NOT_MEASURED, evidence="needs the Go embed rows")
    if not embed.ok:
        return Finding("", claim, Verdict.HOLDS, evidence=f"embed could not be built here: {embed.error}",
                       qualifier="build failed")
    costs = [f"{what} {METRICS[name].format(embed.median(name))}"
             for name, what in (("compile_ns", "compile"), ("compile_peak_rss_bytes", "peak compiler memory"))
             if embed.median(name) is not None]
    return Finding("", claim, Verdict.HOLDS, evidence=(
        "its load does no work (the records are already in memory), so no ratio is meaningful; the cost moved "
        "to the build" + (f": {', '.join(costs)}" if costs else "")))


def _json_is_slowest_and_heaviest(go: dict[str, CellResult]) -> Finding:
    claim = "json is the slowest and uses the most memory"
    measured = {f: r for f, r in go.items() if f != "embed" and r.ok}
    if "json" not in measured or len(measured) < 2:
        return Finding("", claim, Verdict.NOT_MEASURED, evidence="needs go json and another Go format")
    slowest = max(measured, key=lambda f: measured[f].median("wall_ns") or 0)
    heaviest = max(measured, key=lambda f: measured[f].median("alloc_total_bytes") or 0)
    holds = slowest == "json" and heaviest == "json"
    part = "" if holds else f" (slowest: {slowest}; most bytes: {heaviest})"
    return Finding("", claim, Verdict.HOLDS if holds else Verdict.DOES_NOT_HOLD, evidence=(
            f"json {METRICS['wall_ns'].format(measured['json'].median('wall_ns'))} per load, "
            f"{METRICS['alloc_total_bytes'].format(measured['json'].median('alloc_total_bytes'))} allocated{part}"))


def _gob_beats_msgp(go: dict[str, CellResult]) -> Finding:
    """Gob beats msgp only if it wins on time and on bytes; one clear loss refutes it."""
    claim = "gob beats msgp in both time and memory"
    gob, msgp = go.get("gob"), go.get("msgp")
    if gob is None or msgp is None or not gob.ok or not msgp.ok:
        return Finding("", claim, Verdict.NOT_MEASURED, evidence="needs go gob and go msgp")
    comparisons = [paired(msgp, gob, name) for name in ("wall_ns", "alloc_total_bytes")]
    time, memory = comparisons
    evidence = (f"msgp ÷ gob: time {time or '-'}, bytes allocated {memory or '-'} (above 1: gob wins; the study "
                "found gob ahead on both)")
    measured = [c for c in comparisons if c is not None]
    if any(c.value < 1 and not c.within_noise for c in measured):
        return Finding("", claim, Verdict.DOES_NOT_HOLD, evidence=evidence)
    if all(beyond(c, 1) for c in measured) and len(measured) == 2:
        return Finding("", claim, Verdict.HOLDS, evidence=evidence)
    return Finding("", claim, Verdict.WITHIN_NOISE, evidence=evidence)
