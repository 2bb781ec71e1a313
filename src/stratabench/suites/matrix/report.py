"""The matrix suite's report: one row per store, codec and compression, operations side by side."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratabench.metrics import METRICS
from stratabench.options import RunOptions
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult
from stratabench.suites.kit.problems import problem_lines, status_summary
from stratabench.suites.kit.reports import ChartPlan, study_charts, study_report
from stratabench.suites.matrix.suite import OPERATIONS
from stratabench.units import format_bytes, format_ns

__all__ = ["matrix_tables"]


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
               Column("size", "stored", "right", format_bytes)]
    columns += [Column(op, f"{op.replace('_', ' ')}{'' if op == 'get_one' else ' (all)'}", "right", format_ns)
                for op in OPERATIONS]
    columns += [Column("server", "server CPU (get many)", "right", format_ns), Column("integrity", "integrity"),
                Column("status", "status")]
    table = Table(f"matrix: {'/'.join(f'{n:,}' for n in counts)} records from {', '.join(sources)}: "
                  "one record per key", columns)
    groups: dict[tuple[str, str, str], dict[str, CellResult]] = {}
    for result in results:
        p = result.params
        groups.setdefault((p.get("store", "?"), p.get("codec", "?"), p.get("compression", "?")), {})[
            p.get("operation", "?")] = result
    for (store, codec, compression), cells in groups.items():
        row: dict[str, Any] = {"store": store, "codec": codec, "compression": compression}
        row["size"] = next((r.median("size_bytes") for r in cells.values() if r.median("size_bytes")), None)
        for op, result in cells.items():
            if result.ok:
                row[op] = result.median("wall_ns")
        many = cells.get("get_many")
        row["server"] = many.median("server_cpu_ns") if many is not None and many.ok else None
        verified = [r for r in cells.values() if r.integrity is not None]
        row["integrity"] = "-" if not verified else ("ok" if all(r.integrity.ok for r in verified) else "FAIL")  # type: ignore[union-attr]
        row["status"] = status_summary(cells, OPERATIONS)
        table.rows.append(row)
    notes = ["times are medians per operation: get one reads one record; put, get many and delete cover every "
             "record. Every cell was checked against the canonical hash of the records."]
    for op in OPERATIONS:
        timed = [(row[op], f"{row['store']} {row['codec']}+{row['compression']}") for row in table.rows
                 if row.get(op) is not None]
        if timed:
            value, who = min(timed)
            notes.append(f"fastest {op.replace('_', ' ')}: {who} ({METRICS['wall_ns'].format(value)})")
    sized = [(row["size"], f"{row['store']} {row['codec']}+{row['compression']}") for row in table.rows if row.get("size")]
    if sized:
        notes.append(f"smallest: {min(sized)[1]} ({format_bytes(min(sized)[0])})")
    table.notes = notes + problem_lines(results)
    return table
