"""The generic tables: every cell of a suite with the medians of its metrics, and its answer.

The status column lists only exceptions (a failed or unavailable cell, a
result that did not verify, a measurement flagged unstable, one whose samples
are not repeats and so have no interval to judge); a cell that ran, verified
and held steady leaves it empty, so a problem stands out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratabench.metrics import METRICS
from stratabench.report.answer import Answer, Candidate, answer
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult
from stratabench.units import format_count

__all__ = ["NOT_REPEATS", "cells_export_table", "generic_answer", "generic_tables", "integrity_text", "not_repeats_of",
           "not_repeats_table", "status_text", "unstable_of", "unstable_table"]

NOT_REPEATS = "not_repeats"
"""The notes key of a cell whose samples are not repeats of one measurement (only the first does the work,
by the study's design): why, with its figures. No interval over such samples is judged, so the cell is
neither flagged unstable nor called steady; its status says so and a table under its suite gives the reason."""


def unstable_of(result: CellResult) -> list[str]:
    """Why the engine flagged this cell unstable, one reason each with its figure (none when it held steady).

    Results of format v1 kept the flag in ``notes["unstable"]``; they are read too.
    """
    flags = result.flags or result.notes.get("unstable") or ()
    return [str(flag) for flag in flags] if isinstance(flags, (list, tuple)) else [str(flags)]


def not_repeats_of(result: CellResult) -> str | None:
    """Why this cell's samples are not repeats of one measurement (:data:`NOT_REPEATS`), or ``None``."""
    reason = result.notes.get(NOT_REPEATS)
    return None if reason is None else str(reason)


def status_text(result: CellResult) -> str:
    """Empty for a cell that ran, verified and held steady; else what went wrong, in one line."""
    problems = []
    if not result.ok:
        problems.append(f"{result.status}: {result.error}" if result.error else str(result.status))
    elif result.integrity is not None and not result.integrity.ok:
        problems.append("wrong data (hash differs)")
    if unstable_of(result):
        # The reasons, with their figures, are listed under the suite's tables (unstable_table):
        # in a column they would make every table as wide as its longest reason.
        problems.append("unstable")
    elif result.ok and not_repeats_of(result):
        problems.append("not repeats: no interval")
    return "; ".join(problems)


def unstable_table(suite: str, results: Sequence[CellResult]) -> Table | None:
    """The suite's cells flagged unstable, each with its reasons and their figures; ``None`` when none is.

    It goes under the suite's own tables, whose status columns say only "unstable".
    """
    flagged = [result for result in results if result.ok and unstable_of(result)]
    if not flagged:
        return None
    table = Table(f"{suite}: {len(flagged)} of {len(results)} cells flagged unstable (their medians are less sure "
                  "than measured)", [Column("cell", "cell"), Column("why", "why")])
    table.rows = [{"cell": result.cell, "why": "; ".join(unstable_of(result))} for result in flagged]
    table.notes = ["A cell is flagged when the interval of its judged metric's median (thread CPU time for work "
                   "inside the process, wall time for I/O and servers; per round in a run) ended wider than the "
                   "target. A quieter machine, --rigorous or a larger --budget narrows them."]
    return table


def not_repeats_table(suite: str, results: Sequence[CellResult]) -> Table | None:
    """The suite's cells whose samples are not repeats, each with why; ``None`` when there is none."""
    listed = [result for result in results if result.ok and not_repeats_of(result)]
    if not listed:
        return None
    table = Table(f"{suite}: {len(listed)} of {len(results)} cells whose samples are not repeats (no interval "
                  "is judged: neither flagged unstable nor steady)", [Column("cell", "cell"), Column("why", "why")])
    table.rows = [{"cell": result.cell, "why": not_repeats_of(result)} for result in listed]
    table.notes = ["Their samples measure different work (the first does it, the later ones find it done), so an "
                   "interval over them would say nothing about how sure the figure is."]
    return table


def integrity_text(result: CellResult) -> str:
    """``ok``, ``FAIL``, or ``-`` when the cell verifies nothing."""
    if result.integrity is None:
        return "-"
    return "ok" if result.integrity.ok else "FAIL"


def _spread(value: Any) -> str:
    return "-" if value is None else f"±{value:.1f}%"


def generic_tables(results: Sequence[CellResult]) -> list[Table]:
    """One table per suite: cell, loops, the median of every metric measured, spread, status."""
    tables = []
    for suite in dict.fromkeys(r.suite for r in results):
        cells = [r for r in results if r.suite == suite]
        measured = [name for name in METRICS if any(name in r.metrics for r in cells)]
        columns = [Column("cell", "cell"), Column("loops", "loops", "right", format_count, priority=3)]
        columns += [Column(name, name.removesuffix("_ns").removesuffix("_bytes").replace("_", " "), "right",
                           METRICS[name].format, priority=0 if name == "wall_ns" else 2)
                    for name in measured]
        columns += [Column("wall_spread", "time ±", "right", _spread, priority=1), Column("status", "status")]
        table = Table(f"{suite}: every cell (medians)", columns)
        for result in cells:
            row: dict[str, Any] = {"cell": result.cell, "loops": result.loops}
            row.update({name: result.median(name) for name in measured})
            wall = result.summary("wall_ns")
            if wall is not None and wall.median and wall.n > 1:
                row["wall_spread"] = 100 * (wall.ci_high - wall.ci_low) / 2 / wall.median
            row["status"] = status_text(result)
            table.rows.append(row)
        table.notes = ["time ±: half the width of the median's confidence interval, as a share of the median. "
                       "status: empty when the cell ran, returned the expected data and held steady."]
        tables.append(table)
    return tables


def generic_answer(suite: str, results: Sequence[CellResult]) -> Answer | None:
    """An answer over every verified cell: the fastest, the smallest, the least retained memory."""
    candidates = [Candidate(r.cell, r.summary("wall_ns"), r.median("size_bytes"), r.median("retained_bytes"))
                  for r in results if r.suite == suite and r.ok]
    if not candidates:
        return None
    return answer(suite, "which cell is best", candidates, memory="least memory retained")


def cells_export_table(results: Sequence[CellResult]) -> Table:
    """Every cell for machines: each metric's median, confidence interval and its level, n, in named units."""
    measured = [name for name in METRICS if any(name in r.metrics for r in results)]
    columns = [Column("suite", "suite"), Column("cell", "cell"), Column("language", "language"),
               Column("status", "status"), Column("error", "error"), Column("verified", "verified"),
               Column("unstable", "unstable"), Column("loops", "loops")]
    for name in measured:
        columns += [Column(f"{name}_{part}", f"{name} {part}") for part in ("median", "ci_low", "ci_high")]
        columns += [Column(f"{name}_ci_level", f"{name} ci level"), Column(f"{name}_n", f"{name} n")]
    table = Table("every cell, with confidence intervals", columns)
    for result in results:
        row: dict[str, Any] = {
            "suite": result.suite, "cell": result.cell, "language": result.language, "status": result.status,
            "error": result.error, "verified": None if result.integrity is None else result.integrity.ok,
            "unstable": ",".join(unstable_of(result)) or None, "loops": result.loops,
        }
        for name in measured:
            summary = result.summary(name)
            if summary is not None:
                row.update({f"{name}_median": summary.median, f"{name}_ci_low": summary.ci_low,
                            f"{name}_ci_high": summary.ci_high, f"{name}_ci_level": summary.ci_level,
                            f"{name}_n": summary.n})
        table.rows.append(row)
    return table
