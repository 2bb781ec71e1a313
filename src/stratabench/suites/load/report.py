"""The report of a load run: each configuration's throughput and tail, and each rate sweep's knee.

``stratabench load`` writes one cell per configuration (suite ``load``:
:mod:`stratabench.load.cells`); this turns them back into what a reader
asks of a store under load:

- **every configuration**: workload, clients and what they are written in,
  the rate (or a closed loop), requests answered per second, p50, p90, p99,
  p99.9 and max latency of the merged histogram, failed requests, reads
  that did not return what was written, and a status that lists only
  exceptions (failed, wrong data, the clients saturated); the diagnosis in
  full sentences under the table;
- **each rate sweep**: the rates tried, what each answered and its tail,
  which limit the last one passed, and the knee (the highest rate within the
  limits), as a table everywhere and, on the HTML page, as a chart of
  throughput against p99 with the knee marked (:func:`knee_charts`).

Wording follows the rule of :mod:`stratabench.suites.kit.findings`: a
reader's words only (requests per second, p99), never the engine's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratabench.options import RunOptions
from stratabench.redact import redact
from stratabench.report.answer import Answer
from stratabench.report.charts import Chart, ChartPlan, Curve, CurveAxes, curve_chart
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult
from stratabench.suites.kit.reports import study_answer, study_charts, study_report
from stratabench.units import format_ns

__all__ = ["knee_charts", "load_answer", "load_tables", "sweeps"]

# (row key, key in the cell's latency note, header, priority: a narrow terminal leaves out p90 first).
_LATENCIES = (("p50", "p50_ns", "p50", 0), ("p90", "p90_ns", "p90", 2), ("p99", "p99_ns", "p99", 0),
              ("p999", "p999_ns", "p99.9", 1), ("max", "max_ns", "max", 1))


def _per_second(value: Any) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _rate(value: Any) -> str:
    return "closed" if value is None else f"{value:,.0f}"


def _lang(cell: CellResult) -> str:
    return str(cell.params.get("client_lang") or "python")


def _status(cell: CellResult) -> str:
    """Only exceptions: failed, wrong data, clients saturated (the sentences are in the notes)."""
    words = []
    if not cell.ok:
        words.append("failed")
    if cell.integrity is not None and not cell.integrity.ok:
        words.append("wrong data")
    if cell.notes.get("client_saturated"):
        words.append("saturated")
    if cell.notes.get("behind_schedule"):
        words.append("behind")
    return ", ".join(words)


def _subject(cell: CellResult) -> tuple[str, str]:
    """What was loaded, as (header, value): a store's workload, or a service's server and database."""
    noted = cell.notes.get("subject")
    if isinstance(noted, list) and len(noted) == 2:
        return str(noted[0]), str(noted[1])
    p = cell.params  # a file written before cells noted their subject
    if "workload" in p:
        return "workload", str(p["workload"])
    if "server" in p:
        return "server", f"{p['server']} on {p.get('database')}"
    return "cell", cell.cell


def _where(cell: CellResult) -> str:
    """The title of a configuration table: the store and its keys, or the service's database."""
    if isinstance(cell.notes.get("title"), str):
        return str(cell.notes["title"])
    p = cell.params  # a file written before cells noted their title
    if "store" in p:
        return f"load on {redact(str(p['store']))}: {p.get('records')} keys of {p.get('payload_bytes')} bytes"
    if "db" in p:
        return f"servers under load on {redact(str(p['db']))}, every answer checked"
    return "load"


def _row(cell: CellResult) -> dict[str, Any]:
    latency = cell.notes.get("latency") or {}
    row: dict[str, Any] = {
        "subject": _subject(cell)[1], "clients": cell.params.get("clients"), "lang": _lang(cell),
        "clients_in": f"{cell.params.get('clients')} {_lang(cell).capitalize()}",
        "rate": cell.params.get("rate"), "ops_per_s": cell.notes.get("ops_per_s_total"),
        "errors": cell.notes.get("errors"), "failed_checks": cell.notes.get("failed_checks"), "status": _status(cell),
    }
    row.update({key: latency.get(field) for key, field, _, _ in _LATENCIES})
    return row


def _latency_columns(keys: Sequence[str]) -> list[Column]:
    return [Column(key, header, "right", format_ns, priority) for key, _, header, priority in _LATENCIES
            if key in keys]


def _notes(cell: CellResult) -> list[str]:
    lines = [cell.error] if cell.error else []
    lines += [str(w) for w in cell.notes.get("warnings") or ()]
    return [f"{cell.cell}: {line}" for line in lines]


def sweeps(results: Sequence[CellResult]) -> list[list[CellResult]]:
    """The points of each rate sweep (same store, workload, clients, language, limits), lowest rate first."""
    series: dict[tuple[Any, ...], list[CellResult]] = {}
    for cell in results:
        if cell.params.get("sweep") == "point" and cell.params.get("rate") is not None:
            key = tuple(cell.params.get(name) for name in ("store", "workload", "clients", "client_lang",
                                                             "p99_limit_ns", "error_limit"))
            series.setdefault(key, []).append(cell)
    return [sorted(points, key=lambda c: float(c.params["rate"])) for points in series.values()]


def _knee(points: Sequence[CellResult]) -> int | None:
    """Index of the highest rate that stayed within the limits (``None`` when none did)."""
    within = [i for i, c in enumerate(points) if c.ok and not c.notes.get("over_limit")]
    return within[-1] if within else None


def _sweep_title(points: Sequence[CellResult]) -> str:
    p = points[0].params
    return f"workload {p.get('workload')}, {p.get('clients')} clients in {_lang(points[0]).capitalize()}"


def _knee_text(points: Sequence[CellResult]) -> str:
    knee = _knee(points)
    if knee is None:
        return "knee: none, the lowest rate was already past a limit"
    cell = points[knee]
    p99 = (cell.notes.get("latency") or {}).get("p99_ns")
    return (f"knee: {_rate(cell.params['rate'])} requests due per second "
            f"({_per_second(cell.notes.get('ops_per_s_total'))} answered, p99 {format_ns(p99)}), "
            "the highest rate within the limits")


def _limits_text(cell: CellResult) -> str:
    limit, errors = cell.params.get("p99_limit_ns"), cell.params.get("error_limit")
    parts = ([f"p99 {format_ns(limit)}"] if limit is not None else []) + (
        [f"{float(errors):.1%} of requests failed"] if errors is not None else [])
    return " and ".join(parts) or "the limits"


@study_report("load")
def load_tables(results: Sequence[CellResult], options: RunOptions) -> list[Table]:
    """Every configuration, one table per store; then each sweep's table with its knee."""
    tables = []
    for where in dict.fromkeys(_where(c) for c in results):
        cells = [c for c in results if _where(c) == where]
        table = Table(
            where,
            [Column("subject", _subject(cells[0])[0]), Column("clients_in", "clients", "right"),
             Column("rate", "rate/s", "right", _rate), Column("ops_per_s", "done/s", "right", _per_second),
             *_latency_columns([key for key, _, _, _ in _LATENCIES]), Column("errors", "errors", "right"),
             Column("failed_checks", "wrong reads", "right"), Column("status", "status")],
            [_row(c) for c in cells],
        )
        table.notes.append("rate/s: requests due per second (closed: each client sends when answered); done/s: "
                           "requests answered per second; latency from each request's due time (queueing "
                           "included), or its sending in a closed loop; wrong reads: values not as their client "
                           "last wrote them; status: empty when all went well.")
        for cell in cells:
            table.notes += _notes(cell)
        tables.append(table)
    for points in sweeps(results):
        table = Table(
            f"rate sweep: {_sweep_title(points)}",
            [Column("rate", "rate/s", "right", _rate), Column("ops_per_s", "done/s", "right", _per_second),
             *_latency_columns(["p50", "p99", "p999", "max"]), Column("errors", "errors", "right"),
             Column("over_limit", "past the limit")],
            [{**_row(c), "over_limit": c.notes.get("over_limit") or (c.error if not c.ok else "")} for c in points],
        )
        table.notes.append(_knee_text(points))
        table.notes.append(f"limits: {_limits_text(points[0])}; the sweep stops at the first rate past one.")
        tables.append(table)
    return tables


@study_answer("load")
def load_answer(results: Sequence[CellResult], options: RunOptions) -> Answer | None:
    """None: a load run's tables answer it (the generic answer ranks times a load run does not take)."""
    return None


def knee_charts(results: Sequence[CellResult]) -> list[Chart]:
    """One chart of every sweep: answered requests per second against p99, the knee starred."""
    series = sweeps(results)
    if not series:
        return []
    curves = []
    for points in series:
        xy = tuple((float(c.notes.get("ops_per_s_total") or 0), float((c.notes.get("latency") or {}).get("p99_ns") or 0))
                   for c in points)
        past = tuple(i for i, c in enumerate(points) if c.notes.get("over_limit") or not c.ok)
        curves.append(Curve(_sweep_title(points), xy, _knee(points), past))
    limits = {c.params.get("p99_limit_ns") for points in series for c in points}
    only = next(iter(limits)) if len(limits) == 1 else None
    limit = float(only) if only is not None else None
    caption = "As the rate rises, each point is one rate; the star is the knee. " + "; ".join(
        f"{_sweep_title(points)}: {_knee_text(points).removeprefix('knee: ')}" for points in series) + "."
    axes = CurveAxes("requests answered per second", "p99 latency", _per_second, format_ns)
    return [curve_chart("load-knee", "load: throughput against p99 latency, rate by rate", caption, curves, axes,
                        mark_label="knee", limit=limit, limit_label=f"p99 limit {format_ns(limit)}")]


study_charts("load", ChartPlan(sweep="rate", curves=knee_charts))
