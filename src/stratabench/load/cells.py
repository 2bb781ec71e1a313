"""A load result as a result record: one cell per configuration, in the results format every run writes.

The cell's metrics are the two declared for load:

- ``ops_per_s``: one sample per interval of the window (requests answered
  in it over its length, all clients together), so ``compare`` can rank
  two runs' throughputs as it ranks any samples;
- ``latency_ns``: one sample per interval that answered a request, the
  interval's **p99** (the figure load tests are judged by).

The whole latency distribution stays in the record, in ``notes``:
``latency`` (p50, p90, p99, p99.9, max, min, mean of the merged histogram),
``histogram`` (the merged HDR histogram, encoded: base64 of its compressed
V2 form), ``client_histograms`` (each client's, which add up to it) and
``interval_histograms``. Any HdrHistogram port decodes them.

The integrity field counts reads: ``expected`` is how many values were read,
``actual`` how many of them were exactly what their client last wrote, so
the cell verifies only when the two are equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stratabench.datasets.verify import Integrity
from stratabench.load.histogram import decode, summarize_histogram
from stratabench.load.run import LoadResult
from stratabench.results.records import CellResult, MetricResult

__all__ = ["cell_name", "load_cell"]


def cell_name(result: LoadResult) -> str:
    """``workload/clients/closed`` or ``workload/clients/rate`` for a store (``a/c8/r20000``); see ``Pacing.cell_name``."""
    return result.spec.cell_name


def load_cell(
    result: LoadResult,
    *,
    suite: str = "load",
    params: Mapping[str, Any] | None = None,
    runner: str = "local processes",
    duration_s: float | None = None,
    notes: Mapping[str, Any] | None = None,
) -> CellResult:
    """The result record of one load configuration (see the module docstring).

    Parameters
    ----------
    result
        What :func:`~stratabench.load.run.run_load` returned.
    suite
        The ``suite`` field of the record.
    params
        More coordinates for the cell (a codec, a sweep step); the store,
        workload, clients, rate, records, payload size, warm-up and
        duration are always there.
    runner
        Where the clients ran, kept in ``notes``.
    duration_s
        How long the configuration took, loading included.
    notes
        More notes (a sweep point's ``over_limit``: why it passed a limit, or ``None``; a ``subject``,
        ``[header, value]``, naming what was loaded in the caller's words).
    """
    cell_params: dict[str, Any] = {**result.spec.cell_params(), **(params or {})}
    metrics: dict[str, MetricResult] = {}
    if result.ops:
        metrics["ops_per_s"] = MetricResult.of(list(result.interval_ops_per_s))
        p99s = [s.p99_ns for s in (summarize_histogram(decode(h)) for h in result.interval_histograms) if s.count]
        metrics["latency_ns"] = MetricResult.of([float(p) for p in p99s if p is not None])
    checked = result.checked
    noun = result.spec.verified_phrase
    integrity = (
        Integrity(f"{checked} {noun}", f"{checked - result.failed_checks} {noun}", result.first_failed_check)
        if checked else None
    )  # fmt: skip
    all_notes = {
        # What the configuration loaded, in its own words (or the caller's), for reports that read the file alone.
        "title": result.spec.title,
        "subject": list(result.spec.subject),
        **(notes or {}),
        "runner": runner,
        "latency": result.latency.to_json(),
        "ops_per_s_total": result.ops_per_s,
        "ops": result.ops,
        "errors": result.errors,
        "failed_checks": result.failed_checks,
        "warnings": list(result.warnings),
        "client_saturated": result.client_saturated,
        "behind_schedule": result.behind_schedule,
        "histogram": result.histogram,
        "client_histograms": [r.histogram for r in result.reports],
        "interval_histograms": list(result.interval_histograms),
        "clients": [
            {"index": r.index, "host": r.host, "ops": r.ops, "errors": r.errors, "busy": round(r.busy_fraction, 3),
             "unsent": r.unsent, "fatal": r.fatal}
            for r in result.reports
        ],
    }  # fmt: skip
    return CellResult(
        suite=suite, cell=cell_name(result), params=cell_params, language=result.spec.language,
        status="ok" if result.ok else "failed", error=result.error, metrics=metrics,
        integrity=integrity, notes=all_notes, duration_s=duration_s,
    )  # fmt: skip
