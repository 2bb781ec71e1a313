"""The generic table: every cell of a suite with the medians of its metrics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratabench.metrics import METRICS
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult
from stratabench.units import format_count

__all__ = ["generic_tables", "integrity_text", "status_text"]


def status_text(result: CellResult) -> str:
    """``ok``, or the status and its one-line reason."""
    return "ok" if result.ok else f"{result.status}: {result.error}"


def integrity_text(result: CellResult) -> str:
    """``ok``, ``FAIL``, or ``-`` when the cell verifies nothing."""
    if result.integrity is None:
        return "-"
    return "ok" if result.integrity.ok else "FAIL"


def _spread(value: Any) -> str:
    return "-" if value is None else f"±{value:.1f}%"


def generic_tables(results: Sequence[CellResult]) -> list[Table]:
    """One table per suite: cell, loops, the median of every metric measured, status."""
    tables = []
    for suite in dict.fromkeys(r.suite for r in results):
        cells = [r for r in results if r.suite == suite]
        measured = [name for name in METRICS if any(name in r.metrics for r in cells)]
        columns = [Column("cell", "cell"), Column("loops", "loops", "right", format_count)]
        columns += [Column(name, name, "right", METRICS[name].format) for name in measured]
        columns += [Column("wall_spread", "wall ±", "right", _spread), Column("integrity", "integrity"),
                    Column("status", "status")]
        table = Table(f"{suite}: every cell (medians)", columns)
        for result in cells:
            row: dict[str, Any] = {"cell": result.cell, "loops": result.loops}
            row.update({name: result.median(name) for name in measured})
            wall = result.summary("wall_ns")
            if wall is not None and wall.median and wall.n > 1:
                row["wall_spread"] = 100 * (wall.ci_high - wall.ci_low) / 2 / wall.median
            row["integrity"] = integrity_text(result)
            row["status"] = status_text(result)
            table.rows.append(row)
        tables.append(table)
    return tables
