"""The matrix suite's report: the answer for the user's records, then each store × codec × compression."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratabench.options import RunOptions
from stratabench.report.answer import Answer, Candidate, answer, best_of
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult
from stratabench.suites.kit.problems import problem_lines, status_summary
from stratabench.suites.kit.reports import ChartPlan, study_answer, study_charts, study_report
from stratabench.suites.matrix.suite import OPERATIONS, left_out
from stratabench.units import format_bytes, format_ns

__all__ = ["matrix_answer", "matrix_tables"]

Group = tuple[str, str, str]


def _groups(results: Sequence[CellResult]) -> dict[Group, dict[str, CellResult]]:
    groups: dict[Group, dict[str, CellResult]] = {}
    for result in results:
        if result.suite != "matrix":
            continue
        p = result.params
        groups.setdefault((p.get("store", "?"), p.get("codec", "?"), p.get("compression", "?")), {})[
            p.get("operation", "?")] = result
    return groups


def _name(group: Group) -> str:
    store, codec, compression = group
    return f"{codec}{'' if compression == 'none' else ' + ' + compression} on {store}"


def _size(cells: dict[str, CellResult]) -> float | None:
    return next((r.median("size_bytes") for r in cells.values() if r.median("size_bytes")), None)


@study_answer("matrix")
def matrix_answer(results: Sequence[CellResult], options: RunOptions) -> Answer | None:
    """The fastest read of every record, the fastest single read and write, the smallest stored form."""
    groups = _groups(results)
    by_op: dict[str, list[Candidate]] = {op: [] for op in OPERATIONS}
    for group, cells in groups.items():
        for op, result in cells.items():
            if result.ok and op in by_op:
                by_op[op].append(Candidate(_name(group), result.summary("wall_ns"), _size(cells)))
    reads = by_op["get_many"] or by_op["get_one"]
    if not any(by_op.values()):
        return None
    counts = sorted({int(r.params.get("records", 0)) for r in results})
    found = answer("matrix", f"which codec, compression and store for these {'/'.join(f'{n:,}' for n in counts)} "
                    "records", reads, time="fastest read of every record" if by_op["get_many"] else
                    "fastest single read", size="smallest stored")
    for op, label in (("get_one", "fastest single read"), ("put", "fastest write of every record")):
        best = best_of("time", label, by_op[op]) if by_op["get_many"] or op == "put" else None
        if best is not None:
            found.bests.insert(-1, best)
    return found


study_charts("matrix", ChartPlan(group="operation"))  # one chart per operation, stores side by side


@study_report("matrix")
def matrix_tables(results: Sequence[CellResult], options: RunOptions) -> list[Table]:
    """One table: each store × codec × compression with its operations side by side."""
    return [_table(results)]


def _table(results: Sequence[CellResult]) -> Table:
    results = [r for r in results if r.suite == "matrix"]
    counts = sorted({int(r.params.get("records", 0)) for r in results})
    sources = sorted({str(r.params.get("data", "")).rsplit("/", 1)[-1].replace("dataset:", "dataset ") for r in results})
    columns = [Column("store", "store"), Column("codec", "codec"), Column("compression", "compression"),
               Column("size_bytes", "stored", "right", format_bytes)]
    columns += [Column(f"{op}_ns", f"{op.replace('_', ' ')}{'' if op == 'get_one' else ' (all)'}", "right", format_ns,
                       priority=0 if op.startswith("get") else 1)
                for op in OPERATIONS]
    columns += [Column("server_cpu_ns", "server CPU (get many)", "right", format_ns, priority=2),
                Column("status", "status")]
    table = Table(f"matrix: {'/'.join(f'{n:,}' for n in counts)} records from {', '.join(sources)}: "
                  "one record per key", columns)
    for (store, codec, compression), cells in _groups(results).items():
        row: dict[str, Any] = {"store": store, "codec": codec, "compression": compression, "size_bytes": _size(cells)}
        for op, result in cells.items():
            if result.ok:
                row[f"{op}_ns"] = result.median("wall_ns")
        many = cells.get("get_many")
        row["server_cpu_ns"] = many.median("server_cpu_ns") if many is not None and many.ok else None
        wrong = [op for op, r in cells.items() if r.integrity is not None and not r.integrity.ok]
        status = status_summary(cells, OPERATIONS)
        row["status"] = "; ".join(part for part in (status, f"wrong data: {', '.join(wrong)}" if wrong else "") if part)
        table.rows.append(row)
    table.notes = ["times are medians per operation: get one reads one record; put, get many and delete cover every "
                   "record. Every cell was checked against the canonical hash of the records; status lists only "
                   "what went wrong."]
    used_stores = sorted({str(r.params.get("kind")) for r in results})
    codecs = {str(r.params.get("codec")) for r in results}
    missing = [line for line in left_out(None, used_stores) if not any(f"codec {c}:" in line for c in codecs)]
    if missing:
        table.notes.append("left out: " + "; ".join(missing))
    table.notes += problem_lines(results)
    return table
