"""The treestore report (docs/studies/treestore.md §8.3, §9, §10).

First the result header of docs/studies/treestore.md §8.2 (per backend: server and versions,
layout, directories and their filesystems, pragmas, transport codec,
subscriber mode; the tries and state modes). Then per state mode and N:
the reference-shaped table (mean seconds per test and
backend, with sysrepo's comparison column against ``json-file``); the matrix
of our ratios beside the published ones; the seven claims of §9.1 judged
through the shared report kit, with this run's figures and the published
ones; the SQLite target; the known differences of §10; and the usual
stratabench table of every cell (medians, intervals, raw-sample counts).
Beside the study's tables, the ``incremental`` commit core's figures, its
gain and crossings, and the targets of issue 24 (:mod:`.core_report`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratabench.options import RunOptions
from stratabench.report.compare import ratio
from stratabench.report.generic import generic_tables
from stratabench.report.paired import ENOUGH
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult
from stratabench.suites.kit.findings import Finding, Verdict, conclusions_table
from stratabench.suites.kit.reports import ChartPlan, study_charts, study_figure, study_report
from stratabench.suites.treestore.catalog import FAMILIES, TESTS
from stratabench.suites.treestore.claims import NETWORK, Judged, judge_claims, published_means
from stratabench.suites.treestore.core_report import core_gain_table, core_targets_table, crossover_table
from stratabench.suites.treestore.means import CellMeans
from stratabench.systems.treestore.cores import CORES, DEFAULT_CORE
from stratabench.suites.treestore.reference import PUBLISHED, comparison, published_mean
from stratabench.suites.treestore.suite import ORDER, SLICE_FILL

__all__ = ["KNOWN_DIFFERENCES", "treestore_tables"]

KNOWN_DIFFERENCES = (
    "There is no YANG and no libyang: this project's own tree model and validation pass replace them; Python adds "
    "constant costs to every path, so ratios shrink where the core dominates.",
    "Single process, in-process version counter and cache; sysrepo uses shared memory across processes.",
    "Subscribers are threads under one GIL (sysrepo's are native threads); payloads still cross as bytes.",
    "Backends connect eagerly, so no timed try pays for a first connection (sysrepo's Redis plugin connects lazily).",
    "Redis runs the core-command layout (sorted-set index) unless redis+search is available; do not read its "
    "figures as the reference's Redis Stack column.",
    "The MongoDB-wire server is the project's FerretDB 1.24 on a private PostgreSQL (with GIN twins of its indexes, "
    "so equality filters use them) unless a MongoDB is named; FerretDB reads the whole collection for an $or or "
    "a regex (so get tree hash decodes all 2N+1 documents on the server to return 3), and its timings are not "
    "MongoDB 8.0's. A deleted subtree with one stored descendant deletes it by exact _id instead of sysrepo's "
    "regex: still one operation.",
    "There is one more backend: SQLite (in the RAM-backed directory, and sqlite@disk on the system temp directory).",
    "Before each timed try the collector runs and the heap is frozen until the try ends (a C core has no GC).",
)


HEADER_FIELDS = {
    "server_version": "server version", "mongodb_server": "MongoDB-wire server", "redis_layout": "Redis layout",
    "json_dir": "JSON directory", "json_dir_filesystem": "its filesystem", "sqlite_file_dir": "SQLite directory",
    "sqlite_dir_filesystem": "its filesystem", "sqlite_pragmas": "SQLite pragmas", "sqlite_version": "SQLite version",
    "atomic_commit": "commit visible all at once", "transport_codec": "transport codec",
    "subscribers": "subscriber mode",
}
"""The result header of docs/studies/treestore.md §8.2, as each backend's worker reports it, in the order shown."""


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.6f}"


def _present(results: Sequence[CellResult], key: str) -> list[Any]:
    return sorted({r.params[key] for r in results if r.suite == "treestore"}, key=lambda v: (str(type(v)), v))


def _backends(results: Sequence[CellResult]) -> list[str]:
    present = {r.params["backend"] for r in results if r.suite == "treestore"}
    return [name for name in ORDER if name in present]


def reference_table(means: CellMeans, backends: list[str], n: int, state: str, tries: str) -> Table:
    columns = [Column("n", "#", "right"), Column("test", "test name")]
    for backend in backends:
        columns.append(Column(f"{backend}:s", f"{backend} (s)", "right", _seconds))
        if backend != "json-file":
            columns.append(Column(f"{backend}:vs", f"{backend} vs json-file", "left"))
    table = Table(f"treestore: {n:,} list entries, {tries}, mean seconds (state: {state})", columns)
    for test in TESTS:
        row: dict[str, Any] = {"n": test.number, "test": test.name}
        base = means.mean("json-file", n, test.number, state)
        for backend in backends:
            mine = means.mean(backend, n, test.number, state)
            row[f"{backend}:s"] = mine
            if backend != "json-file":
                row[f"{backend}:vs"] = "-" if mine is None or base is None else comparison(mine, base)
        table.rows.append(row)
    table.notes = ["Comparison as sysrepo prints it: the larger mean over the smaller, truncated to 3 decimals, "
                   "with 'faster'/'slower' for its colours; the results keep the signed ratio t / t(json-file)."]
    return table


def matrix_table(means: CellMeans, backends: list[str], n: int, state: str) -> Table:
    others = [b for b in backends if b != "json-file"]
    columns = [Column("test", "test")]
    for backend in others:
        columns.append(Column(f"{backend}:ours", f"{backend} (means)"))
        columns.append(Column(f"{backend}:medians", "medians"))
        if backend in ("mongodb", "redis") and n in PUBLISHED:
            columns.append(Column(f"{backend}:published", "published"))
    table = Table(f"treestore: ratio to json-file at {n:,} list entries, ours beside the published (state: {state})", columns)
    for test in TESTS:
        row: dict[str, Any] = {"test": test.name}
        base_cell = means.cell("json-file", n, test.number, state)
        base = means.mean("json-file", n, test.number, state)
        for backend in others:
            mine = means.mean(backend, n, test.number, state)
            row[f"{backend}:ours"] = "-" if mine is None or base is None else comparison(mine, base)
            cell = means.cell(backend, n, test.number, state)
            by_median = ratio(None if cell is None else cell.summary("wall_ns"),
                              None if base_cell is None else base_cell.summary("wall_ns"))
            row[f"{backend}:medians"] = "-" if by_median is None else str(by_median)
            published, published_base = published_mean(n, test.number, backend), published_mean(n, test.number,
                                                                                                "json-file")
            if published is not None and published_base is not None:
                row[f"{backend}:published"] = comparison(published, published_base)
        table.rows.append(row)
    table.notes = ["medians: t / t(json-file) of medians, '~' when their 95% intervals overlap. In the sysrepo "
                   "state mode tests 12-15 and 19-22 change data on try 1 only, so their medians are the no-op "
                   "tries, as in sysrepo's own test program: the means are the reproduction."]
    if "redis" in others:
        table.notes.append("redis here is the core-command layout, the reference ran Redis Stack with RediSearch.")
    if "mongodb" in others:
        table.notes.append("mongodb here is the MongoDB-wire server of the run (locally FerretDB), the reference "
                           "ran MongoDB 8.0.")
    return table


def _verdict(judged: Judged, network_present: bool) -> Verdict:
    if judged.holds is None:
        return Verdict.NEEDS_SERVER if not network_present and "network" in judged.missing else Verdict.NOT_MEASURED
    return Verdict.HOLDS if judged.holds else Verdict.DOES_NOT_HOLD


def claims_table(means: CellMeans, backends: list[str], sizes: list[int], state: str) -> Table:
    n = 10_000 if 10_000 in sizes else max(sizes)
    # A backend that could not run here at all (redis+search without its module) is not a backend the
    # claims are about; one that ran but lost some cells still is, and those claims say what is missing.
    ran = [b for b in backends if any(means.cell(b, size, test.number, state) for size in sizes for test in TESTS)]
    ours = judge_claims(lambda b, size, number: means.mean(b, size, number, state), ran, n, sizes)
    reference = {j.number: j for j in judge_claims(published_means, ["json-file", "mongodb", "redis"], n
                                                   if n in PUBLISHED else 10_000, sorted(PUBLISHED))}
    network_present = any(b in NETWORK for b in ran)
    # A mean of fewer tries than a 95% interval needs judges nothing: the study's own claims rest on 10.
    tries = min((len(r.metrics["wall_ns"].samples) for r in means.index.results
                 if r.ok and "wall_ns" in r.metrics and r.params.get("test") != 11), default=0)
    few = f"{tries} tries a cell; --set treestore.tries=10" if 0 < tries < ENOUGH else ""
    found = []
    for judged in ours:
        evidence = judged.evidence or "-"
        if judged.missing:
            evidence += f" (not measured: {judged.missing})"
        evidence += f"; published: {reference[judged.number].evidence}"
        verdict = _verdict(judged, network_present)
        measured = verdict in (Verdict.HOLDS, Verdict.DOES_NOT_HOLD)
        found.append(Finding(str(judged.number), judged.claim, Verdict.TOO_FEW if few and measured else verdict,
                             evidence=evidence, words={}, qualifier=few if measured else ""))
    return conclusions_table(f"treestore: the claims of sysrepo's study, judged at {n:,} list entries "
                             f"on means (state: {state})", found,
                             notes=["Each claim is judged by the same rule on this run and on the published "
                                    "means; 'published' is what that rule finds in the reference's figures."])


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def header_table(results: Sequence[CellResult], backends: list[str], sizes: list[int], states: list[str]) -> Table:
    """The result header of docs/studies/treestore.md §8.2: what the run used, per backend, then the tries and the state modes."""
    table = Table("treestore: result header", [Column("scope", "backend"), Column("field", "field"),
                                               Column("value", "value")])
    for n in sizes:
        table.rows.append({"scope": "run", "field": f"tries at N = {n:,}", "value": _tries_text(results, n)})
    table.rows.append({"scope": "run", "field": "state mode", "value": ", ".join(states)})
    for backend in backends:
        header = next((r.notes["header"] for r in results
                       if r.params["backend"] == backend and r.notes.get("header")), None)
        if header is None:
            table.rows.append({"scope": backend, "field": "-", "value": "its worker reported no header (not run)"})
            continue
        table.rows += [{"scope": backend, "field": label, "value": _value(header[key])}
                       for key, label in HEADER_FIELDS.items() if key in header]
    return table


def differences_table(results: Sequence[CellResult]) -> Table:
    table = Table("treestore: known differences from sysrepo's study", [Column("difference", "difference")])
    table.rows = [{"difference": line} for line in KNOWN_DIFFERENCES]
    seen: dict[str, str] = {}
    for result in results:
        if result.suite != "treestore":
            continue
        backend = result.params["backend"]
        if result.status == "unavailable" and backend not in seen:
            seen[backend] = f"{backend}: not run here: {result.error}"
        header = result.notes.get("header") or {}
        if "mongodb_server" in header and "mongodb" not in seen:
            seen["mongodb"] = f"mongodb: {header['mongodb_server']} {header.get('server_version', '')}".strip()
    table.rows += [{"difference": line} for line in seen.values()]
    return table


def state_table(means: CellMeans, backends: list[str], sizes: list[int]) -> Table:
    table = Table("treestore: tests whose means differ between the state modes (sysrepo vs fresh-state)",
                  [Column("test", "test"), Column("backend", "backend"), Column("n", "N", "right"),
                   Column("sysrepo", "sysrepo (s)", "right", _seconds),
                   Column("fresh", "fresh-state (s)", "right", _seconds)])
    for n in sizes:
        for backend in backends:
            for test in TESTS:
                a, b = means.mean(backend, n, test.number, "sysrepo"), means.mean(backend, n, test.number, "fresh-state")
                if a is not None and b is not None and max(a, b) > 2 * min(a, b):
                    table.rows.append({"test": test.name, "backend": backend, "n": n, "sysrepo": a, "fresh": b})
    table.notes = ["Listed when one mean is more than twice the other: the tests whose later tries are no-ops in "
                   "the sysrepo mode."]
    return table


def growth_table(means: CellMeans, backends: list[str], sizes: list[int], state: str,
                 core: str = DEFAULT_CORE) -> Table:
    """Time against N per backend and test family, summed; the HTML report plots each test's line."""
    columns = [Column("family", "test family"), Column("backend", "backend")]
    columns += [Column(f"n{n}", f"N = {n:,} (s)", "right", _seconds) for n in sizes]
    columns.append(Column("growth", f"× from N = {sizes[0]:,} to {sizes[-1]:,}", "right"))
    table = Table(f"treestore: growth with N, sum of each family's mean seconds (state: {state}, {core} core)",
                  columns)
    for family, numbers in FAMILIES.items():
        for backend in backends:
            row: dict[str, Any] = {"family": family, "backend": backend}
            for n in sizes:
                found = [means.mean(backend, n, number, state, core) for number in numbers]
                row[f"n{n}"] = None if None in found else sum(v for v in found if v is not None)
            first, last = row[f"n{sizes[0]}"], row[f"n{sizes[-1]}"]
            if all(row[f"n{n}"] is None for n in sizes):
                continue  # not measured on this core (the reads on the incremental one)
            row["growth"] = "-" if not first or last is None else f"{last / first:.1f}×"
            table.rows.append(row)
    return table


def _tries_text(results: Sequence[CellResult], n: int, *, more_too: bool = True) -> str:
    """``2`` or ``2 (many oper change_subs: 1)``: what the header and (``tries 2``) a size's title say about tries.

    A default run's tests that took more tries (:class:`~.harness.MoreTries`) add how many, and why,
    unless ``more_too`` is false (a title: the header table says it). A sliced run (the default) says
    how many slices its repeated tests took and what a slice is (:class:`~.suite.TreestoreSlices`):
    its tries per test are no longer the count of its values.
    """
    usual = sorted({r.params["tries"] for r in results if r.params["n"] == n and r.params["test"] != 11})
    many = sorted({r.params["tries"] for r in results if r.params["n"] == n and r.params["test"] == 11})
    text = "/".join(map(str, usual))
    text = text if many in ([], usual) else f"{text} (many oper change_subs: {'/'.join(map(str, many))})"
    sliced = sorted(len(r.notes["slice_rounds"]) for r in results if r.params["n"] == n and r.notes.get("slice_rounds"))
    if sliced:
        counts = str(sliced[0]) if sliced[0] == sliced[-1] else f"{sliced[0]}-{sliced[-1]}"
        what = next(r.notes["slice_tries"] for r in results if r.params["n"] == n and r.notes.get("slice_tries"))
        return (f"{counts} slices where tries repeat ({what}), tries {text} where they do not" if more_too else
                f"{counts} slices where tries repeat (a slice: one try, or the median of tries until "
                f"they time {SLICE_FILL.timed_ns / 1e6:g} ms), tries {text} elsewhere")
    if not more_too:
        return f"tries {text}"  # a title: the header table says why some took more
    more = [r for r in results if r.params["n"] == n and r.notes.get("more_tries")]
    if not more:
        return text
    taken = sorted(int(r.notes.get("tries", 0)) for r in more)
    plan = more[0].notes["more_tries"]
    return (f"{text}; where tries repeat, {taken[0]}-{taken[-1]}: more until the median is within "
            f"±{100 * plan['target']:g}% or {plan['budget_ns'] / 1e9:g} s of tries is spent, after an untimed "
            "warm-up try where it changes no state")


@study_report("treestore")
def treestore_tables(results: Sequence[CellResult], options: RunOptions) -> list[Table]:
    ours = [r for r in results if r.suite == "treestore"]
    if not ours:
        return []
    means = CellMeans(ours)
    backends = _backends(ours)
    sizes = [int(n) for n in _present(ours, "n")]
    states = [s for s in ("sysrepo", "fresh-state") if s in _present(ours, "state")]
    cores = [c for c in CORES if any(r.params.get("core", DEFAULT_CORE) == c for r in ours)]
    tables = [header_table(ours, backends, sizes, states)]
    for state in states:
        for n in sizes:
            tables.append(reference_table(means, backends, n, state, _tries_text(ours, n, more_too=False)))
            tables.append(matrix_table(means, backends, n, state))
            if len(cores) > 1:
                tables.append(core_gain_table(means, backends, n, state))
        if len(sizes) > 1:
            tables += [growth_table(means, backends, sizes, state, core) for core in cores]
        tables.append(claims_table(means, backends, sizes, state))
        tables.append(crossover_table(means, backends, sizes, state, cores))
    if len(states) == 2:
        tables.append(state_table(means, backends, sizes))
    tables.append(core_targets_table(means, backends, sizes, states[0]))
    tables.append(differences_table(ours))
    tables += generic_tables(ours)
    return tables


# One growth plot of time against N per test family (a line per backend and test), one time chart per family.
study_charts("treestore", ChartPlan(sweep="n", ignore=("tries",), group="family", growth_by_group=True))
study_figure("treestore", "each try runs its store in a worker process of its own, which times the whole test around it: wall time")
