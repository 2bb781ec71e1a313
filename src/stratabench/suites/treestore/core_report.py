"""The treestore report's second half: the ``incremental`` commit core beside the study's ``sysrepo`` core.

The study's tables and claims are judged on the ``sysrepo`` core (the
reproduction). Beside them: per test and backend, the mean on each core and
the incremental core's gain; per core, test family and per-node backend, the
N from which that backend beats json-file; and the targets of issue 24 that
a run of the suite can judge (the benchmark
``benchmarks/treestore_cached_create.py`` prints the others: the JSON file's
commit against its serialization, and the allocations of one commit).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from stratabench.report.compare import compare_samples
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult
from stratabench.suites.kit.findings import TARGET, Finding, Verdict, findings_table
from stratabench.suites.treestore.catalog import FAMILIES, TESTS
from stratabench.suites.treestore.claims import NETWORK, judge_claims
from stratabench.suites.treestore.means import CellMeans

__all__ = ["INCREMENTAL", "PUBLISHED_CACHED_CREATE", "SQLITE_TARGET", "core_gain_table", "core_targets_table",
           "crossover_table"]

INCREMENTAL = "incremental"
SYSREPO = "sysrepo"
SQLITE_TARGET = 10.0
"""On the incremental core, sqlite beats json-file on "create an item cached" at N = 100,000 by this factor."""
PUBLISHED_CACHED_CREATE = 1.37
"""sysrepo's published json-file / per-node ratio of "create an item cached" at N = 100,000 (MongoDB: 1.370×)."""
TARGET_N = 100_000


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.6f}"


def _gain(before: float | None, after: float | None) -> str:
    return "-" if before is None or after is None or after <= 0 else f"{before / after:.2f}×"


def core_gain_table(means: CellMeans, backends: list[str], n: int, state: str) -> Table:
    """Per test and backend: the mean on each core and the gain (sysrepo / incremental)."""
    columns = [Column("n", "#", "right"), Column("test", "test name")]
    for backend in backends:
        columns += [Column(f"{backend}:s", f"{backend} sysrepo (s)", "right", _seconds),
                    Column(f"{backend}:i", "incremental (s)", "right", _seconds),
                    Column(f"{backend}:gain", "gain", "right")]
    table = Table(f"treestore: the incremental core beside the study's at {n:,} list entries, mean seconds "
                  f"(state: {state})", columns)
    for test in TESTS:
        if all(means.mean(b, n, test.number, state, INCREMENTAL) is None for b in backends):
            continue
        row: dict[str, Any] = {"n": test.number, "test": test.name}
        for backend in backends:
            before, after = means.mean(backend, n, test.number, state), means.mean(backend, n, test.number, state,
                                                                                    INCREMENTAL)
            row.update({f"{backend}:s": before, f"{backend}:i": after, f"{backend}:gain": _gain(before, after)})
        table.rows.append(row)
    table.notes = ["gain: the sysrepo core's mean over the incremental core's. The incremental core copies only "
                   "the path to each changed node of a cached tree and validates only what the commit changed; "
                   "an uncached commit loads its own tree on both cores, so there it saves the validation only. "
                   "The reads (tests 1-6) commit nothing in their timed block and run the same code on both "
                   "cores: measured on the sysrepo core only."]
    return table


def _family_time(means: CellMeans, backend: str, n: int, numbers: Sequence[int], state: str, core: str) -> float | None:
    found = [means.mean(backend, n, number, state, core) for number in numbers]
    return None if None in found or not found else sum(v for v in found if v is not None)


def _measured(means: CellMeans, backends: Sequence[str], sizes: Sequence[int], numbers: range, state: str,
              core: str) -> list[int]:
    """The tests of a family measured on every one of ``backends`` at every size (a run may pick tests)."""
    return [number for number in numbers
            if all(means.mean(b, n, number, state, core) is not None for b in backends for n in sizes)]


def _crossing(ratios: dict[int, float]) -> str:
    """From which N on a backend beats json-file, given its time ratio to json-file at each N."""
    sizes = sorted(ratios)
    winning = [n for n in sizes if ratios[n] < 1]
    if not winning:
        return f"not up to N = {sizes[-1]:,}"
    if ratios[sizes[-1]] >= 1:
        return f"not at N = {sizes[-1]:,} (faster at N = {', '.join(f'{n:,}' for n in winning)} only)"
    first = next(n for n in sizes if all(ratios[m] < 1 for m in sizes if m >= n))  # wins here and at every larger N
    if first == sizes[0]:
        return f"N ≤ {first:,} (every size measured)"
    below = sizes[sizes.index(first) - 1]
    # Times grow as powers of N, so the ratio is interpolated on log-log axes between the two sizes.
    a, b = math.log(ratios[below]), math.log(ratios[first])
    at = math.exp(math.log(below) + (math.log(first) - math.log(below)) * a / (a - b)) if a != b else first
    return f"N = {first:,} (crosses near {at:,.0f})"


def crossover_table(means: CellMeans, backends: list[str], sizes: list[int], state: str, cores: list[str]) -> Table:
    """Per core, test family and per-node backend: the family's time against json-file at each N, and the crossing."""
    columns = [Column("core", "core"), Column("family", "test family"), Column("backend", "backend")]
    columns += [Column(f"n{n}", f"vs json-file at {n:,}", "right") for n in sizes]
    columns.append(Column("from", "beats json-file from"))
    table = Table(f"treestore: from which N each per-node backend beats json-file, per test family (state: {state})",
                  columns)
    for core in cores:
        for family, numbers in FAMILIES.items():
            for backend in (b for b in backends if b != "json-file"):
                ratios = {}
                measured = _measured(means, (backend, "json-file"), sizes, numbers, state, core)
                label = family if len(measured) == len(numbers) else \
                    f"{family}: test{'s' if len(measured) > 1 else ''} {', '.join(map(str, measured))} of it"
                row: dict[str, Any] = {"core": core, "family": label, "backend": backend}
                for n in sizes:
                    mine = _family_time(means, backend, n, measured, state, core)
                    base = _family_time(means, "json-file", n, measured, state, core)
                    if mine is None or base is None or base <= 0:
                        row[f"n{n}"] = "-"
                        continue
                    ratios[n] = mine / base
                    row[f"n{n}"] = f"{ratios[n]:.3f}"
                if not ratios:
                    continue
                row["from"] = _crossing(ratios)
                table.rows.append(row)
    table.notes = ["A family's time is the sum of its tests' means; below 1 the backend is faster than json-file. "
                   "'beats json-file from' is the smallest N measured from which it is faster at every larger N "
                   "measured, with the crossing interpolated on log-log axes when a smaller N lost. Families the "
                   "incremental core does not measure (reads: the same code on both cores) are left out for it."]
    return table


def _samples(cell: CellResult | None) -> list[float]:
    metric = None if cell is None else cell.metrics.get("wall_ns")
    return [] if metric is None else list(metric.samples)


def _cached_create(means: CellMeans, backend: str, core: str, state: str) -> tuple[str, Verdict, float | None,
                                                                                  tuple[float, float] | None]:
    """json-file / ``backend`` on "create an item cached" at N = 100,000: text, whether measured, ratio, interval."""
    base = means.cell("json-file", TARGET_N, 17, state, core)
    cell = means.cell(backend, TARGET_N, 17, state, core)
    json_mean, mine = means.mean("json-file", TARGET_N, 17, state, core), means.mean(backend, TARGET_N, 17, state, core)
    if json_mean is None or mine is None:
        return "needs 100,000 list entries (run treestore --full)", Verdict.NOT_MEASURED, None, None
    tested = compare_samples(_samples(cell), _samples(base))
    interval = None if tested is None else (tested.low, tested.high)
    text = f"{json_mean / mine:.2f}× on means ({json_mean:.6f} s vs {mine:.6f} s)"
    if tested is not None:
        text += f"; medians {tested.ratio:.2f}×, 95% interval {tested.low:.2f}–{tested.high:.2f}"
    return text, Verdict.HOLDS, json_mean / mine, interval


def core_targets_table(means: CellMeans, backends: list[str], sizes: list[int], state: str) -> Table:
    """The targets of issue 24 a run can judge: the incremental core's 10×, the sysrepo core's 1.37× and claims."""
    found = []
    text, measured, factor, interval = _cached_create(means, "sqlite", INCREMENTAL, state)
    verdict = measured if factor is None else Verdict.HOLDS if factor >= SQLITE_TARGET and (
        interval is None or interval[0] >= SQLITE_TARGET) else Verdict.DOES_NOT_HOLD
    found.append(Finding("T1", f"incremental core: sqlite beats json-file on 'create an item cached' at 100,000 list "
                               f"entries by ≥ {SQLITE_TARGET:g}×", verdict, here=text, words=TARGET))
    for backend in [b for b in backends if b != "json-file"]:
        text, measured, factor, interval = _cached_create(means, backend, SYSREPO, state)
        if factor is not None:
            inside = interval is not None and interval[0] <= PUBLISHED_CACHED_CREATE <= interval[1]
            verdict = Verdict.HOLDS if inside else Verdict.DOES_NOT_HOLD
        else:
            verdict = measured
        found.append(Finding(f"T2 {backend}", f"sysrepo core: {backend} / json-file on 'create an item cached' at "
                                              f"100,000 reproduces the published {PUBLISHED_CACHED_CREATE}× within "
                                              "the run's interval", verdict, here=text, words=TARGET))
    n = 10_000 if 10_000 in sizes else max(sizes)
    judged = judge_claims(lambda b, size, number: means.mean(b, size, number, state), backends, n, sizes)
    unjudged = [j for j in judged if j.holds is None]
    if not unjudged:
        verdict, here = Verdict.HOLDS, f"all seven judged at {n:,}"
    else:
        # A claim about the network backends waits for a server; one the run could have judged is missed.
        verdict = Verdict.NEEDS_SERVER if not any(b in NETWORK for b in backends) else Verdict.DOES_NOT_HOLD
        here = "claims not judged: " + "; ".join(f"{j.number} ({j.missing})" for j in unjudged)
    found.append(Finding("T3", "sysrepo core: all seven claims of the study judged", verdict, here=here,
                         words=TARGET))
    return findings_table("treestore: targets of the incremental core (issue 24)", found,
                          {"id": "#", "claim": "target", "here": "here", "verdict": "verdict"},
                          notes=["Intervals: bootstrap 95% interval of the ratio of the two cells' medians (every "
                                 "try of this test does the real commit). The benchmark "
                                 "benchmarks/treestore_cached_create.py measures the same ratios try by try, "
                                 "interleaved, plus the json-file commit against its serialization and the "
                                 "allocations of one commit on each core."])
