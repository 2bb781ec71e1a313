"""The bulkload suite's report: the cells table, the seed's published figures beside ours, its conclusions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratabench.datasets import bulkload as dataset
from stratabench.metrics import METRICS
from stratabench.options import RunOptions
from stratabench.report.compare import ratio
from stratabench.report.generic import integrity_text, status_text
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult
from stratabench.suites.bulkload.suite import DEFAULT_SIZE, GO_FORMATS
from stratabench.suites.kit.findings import Finding, Verdict, beyond, conclusions_table as kit_conclusions_table
from stratabench.suites.kit.reports import study_report
from stratabench.units import format_count

__all__ = ["PUBLISHED", "bulkload_tables"]

#: The seed's published figures (specs/bulkload.md §6): format → (N, ns/op, B/op, allocs/op).
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



@study_report("bulkload")
def bulkload_tables(results: Sequence[CellResult], options: RunOptions) -> list[Table]:
    """The three tables of the study, from its cells' results."""
    size = options.size or DEFAULT_SIZE
    seed = dataset.DEFAULT_SEED if options.seed is None else options.seed
    return [_main_table(results, seed), _published_table(results, size), conclusions_table(results)]



def _main_table(results: Sequence[CellResult], seed: int) -> Table:
    fmt = {name: METRICS[name].format for name in METRICS}
    columns = [
        Column("name", "name"), Column("lang", "lang"), Column("loops", "N", "right", format_count),
        Column("wall_ns", "ns/op", "right", fmt["wall_ns"]),
        Column("vs_json", "vs json", "right", lambda r: "-" if r is None else str(r)),
        Column("alloc_total_bytes", "B/op (Go)", "right", fmt["alloc_total_bytes"]),
        Column("allocs_total", "allocs/op (Go)", "right", format_count),
        Column("alloc_bytes", "peak B (Py)", "right", fmt["alloc_bytes"]),
        Column("retained_bytes", "retained B (Py)", "right", fmt["retained_bytes"]),
        Column("allocs", "live blocks (Py)", "right", format_count),
        Column("size_bytes", "size", "right", fmt["size_bytes"]),
        Column("hash", "hash"), Column("integrity", "integrity"), Column("status", "status"),
    ]
    problems: list[str] = []
    sizes = sorted({int(r.params.get("size", 0)) for r in results})
    table = Table(f"bulkload: {'/'.join(f'{s:,}' for s in sizes)} records, seed {seed} — Go and Python",
                  columns)
    baseline = {
        "go": next((r for r in results if r.cell == "go json/warm" and r.ok), None),
        "python": next((r for r in results if r.cell == "json/typed" and r.ok), None),
    }

    def order(result: CellResult) -> tuple[int, int, str]:
        if result.language == "go":
            fmt_name = result.params.get("format", "")
            index = GO_FORMATS.index(fmt_name) if fmt_name in GO_FORMATS else len(GO_FORMATS)
            return (0, index, result.cell)
        return (1, 0, "")  # Python rows keep the order they ran in

    for result in sorted(results, key=order):
        base = baseline.get(result.language)
        row: dict[str, Any] = {
            "name": result.cell, "lang": result.language, "loops": result.loops,
            "hash": result.integrity.actual[:12] if result.integrity else None,
            "integrity": integrity_text(result), "status": result.status,
            "vs_json": ratio(result.summary("wall_ns"), base.summary("wall_ns")) if base and result.ok else None,
        }
        for name in ("wall_ns", "alloc_total_bytes", "allocs_total", "alloc_bytes", "retained_bytes", "allocs",
                     "size_bytes"):
            row[name] = result.median(name)
        table.rows.append(row)
        if not result.ok:
            problems.append(f"{result.cell}: {status_text(result)}")
    hashes = {r.integrity.expected for r in results if r.integrity}
    table.notes = [
        f"expected hash: {', '.join(sorted(hashes)) or '-'}",
        "Go's B/op and allocs/op count every allocation, garbage included; Python's peak, retained and live-block "
        "figures come from a tracemalloc pass: different quantities, so different columns.",
        "vs json: ratio of medians against json in the same language (go json/warm, json/typed); "
        "~ marks a difference within noise.",
    ]
    embed = next((r for r in results if r.cell.startswith("go embed") and r.metrics), None)
    if embed is not None:
        costs = ", ".join(
            f"{label} {METRICS[name].format(embed.median(name))}"
            for name, label in (("compile_ns", "compile"), ("compile_peak_rss_bytes", "peak compiler memory"),
                                ("binary_size_bytes", "binary"), ("init_ns", "package init"))
            if embed.median(name) is not None
        )
        table.notes.append(f"go embed build cost: {costs}")
    if any(r.params.get("codec") == "protobuf" for r in results):
        table.notes.append(
            "protobuf (upb) decodes lazily: its row times the parse, Python objects are built on first read, and "
            "its memory lives in upb's arena, which tracemalloc cannot see."
        )
    table.notes += problems
    return table

def _published_table(results: Sequence[CellResult], size: int) -> Table:
    fmt = METRICS["wall_ns"].format
    places = list(PUBLISHED)
    columns = [Column("format", "format")]
    columns += [Column(place, f"{SHORT_PLACE[place]} ns/op", "right", fmt) for place in places]
    columns += [Column("ours_warm", "here warm", "right", fmt),
                Column("ours_fresh", "here fresh", "right", fmt),
                Column("published_b", "dev B/op", "right", METRICS["alloc_total_bytes"].format),
                Column("ours_b", "here B/op", "right", METRICS["alloc_total_bytes"].format),
                Column("published_allocs", "dev allocs/op", "right", format_count),
                Column("ours_allocs", "here allocs/op", "right", format_count)]
    table = Table("bulkload: the seed's published Go figures (100,000 records, Go 1.8, 2018) beside this machine",
                  columns)
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
    table.notes.append("here = this machine, this run (warm: the seed's semantics; fresh: an empty destination each load).")
    table.notes.append("us-central could not deploy embed: App Engine's precompilation timed out.")
    if size != DEFAULT_SIZE:
        table.notes.append(f"this run used {size:,} records, not the study's 100,000: compare shapes, not sizes.")
    return table

def conclusions_table(results: Sequence[CellResult]) -> Table:
    """The seed's four conclusions, each judged on the warm Go rows of this run."""
    go = {str(r.params.get("format")): r for r in results if r.language == "go" and r.params.get("variant") == "warm"}
    return kit_conclusions_table("bulkload: the seed's conclusions on this machine", [
        _embed_is_fastest_but_may_not_build(go),
        _json_is_slowest_and_heaviest(go),
        _gob_beats_msgp(go),
        Finding("", "json, gob and msgpack need no code generation; msgp needs a generator step",
                Verdict.BY_CONSTRUCTION,
                evidence="go/internal: msgp decodes with generated methods; json, gob and msgpack use reflection"),
    ], notes=["verdicts compare medians of the warm variant (the seed's semantics) from this run; "
              "'within noise' means the confidence intervals overlap. Results depend on the Go version."])


def _embed_is_fastest_but_may_not_build(go: dict[str, CellResult]) -> Finding:
    claim = "embedding in source is by far the fastest load, but huge sources can fail to build"
    embed = go.get("embed")
    others = [r for f, r in go.items() if f != "embed" and r.ok]
    if embed is None or not others:
        return Finding("", claim, Verdict.NOT_MEASURED,
                       evidence="needs the Go rows (embed and at least one other format)")
    if not embed.ok:
        return Finding("", claim, Verdict.HOLDS, evidence=f"embed could not be built here: {embed.error}",
                       qualifier="build failed")
    fastest_other = min(others, key=lambda r: r.median("wall_ns") or float("inf"))
    r = ratio(fastest_other.summary("wall_ns"), embed.summary("wall_ns"))
    compile_ns = embed.median("compile_ns")
    cost = f"; built in {METRICS['compile_ns'].format(compile_ns)}" if compile_ns else ""
    return Finding("", claim, Verdict.HOLDS if beyond(r, 10) else Verdict.DOES_NOT_HOLD,
                   evidence=f"{fastest_other.params.get('format')} is {r} slower than embed{cost}")


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
            f"json {METRICS['wall_ns'].format(measured['json'].median('wall_ns'))}/op, "
            f"{METRICS['alloc_total_bytes'].format(measured['json'].median('alloc_total_bytes'))}/op{part}"))


def _gob_beats_msgp(go: dict[str, CellResult]) -> Finding:
    """Gob beats msgp only if it wins on time and on bytes; one clear loss refutes it."""
    claim = "gob beats msgp in both time and memory"
    gob, msgp = go.get("gob"), go.get("msgp")
    if gob is None or msgp is None or not gob.ok or not msgp.ok:
        return Finding("", claim, Verdict.NOT_MEASURED, evidence="needs go gob and go msgp")
    comparisons = [ratio(msgp.summary(name), gob.summary(name)) for name in ("wall_ns", "alloc_total_bytes")]
    time, memory = comparisons
    evidence = f"msgp/gob time {time or '-'}, bytes {memory or '-'} (above 1: gob wins; the seed found gob ahead in both)"
    measured = [c for c in comparisons if c is not None]
    if any(c.value < 1 and not c.within_noise for c in measured):
        return Finding("", claim, Verdict.DOES_NOT_HOLD, evidence=evidence)
    if all(beyond(c, 1) for c in measured) and len(measured) == 2:
        return Finding("", claim, Verdict.HOLDS, evidence=evidence)
    return Finding("", claim, Verdict.WITHIN_NOISE, evidence=evidence)
