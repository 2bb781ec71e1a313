"""The matrix suite's report: the answer for the user's records, then each store × codec × compression."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratabench.options import RunOptions
from stratabench.report.answer import Answer, Candidate, answer
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult
from stratabench.suites.kit.problems import problem_lines, status_summary
from stratabench.suites.kit.reports import ChartPlan, study_answer, study_charts, study_figure, study_report
from stratabench.suites.matrix.suite import OPERATIONS, left_out
from stratabench.units import format_bytes, format_ns

__all__ = ["ANSWERED", "candidates_of", "matrix_answer", "matrix_tables"]

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


#: The operations the answer is given for, in the reader's words, and the memory each is judged on.
ANSWERED = (("get_one", "read one"), ("get_many", "read many"), ("put", "write"))


def candidates_of(results: Sequence[CellResult], operation: str, records: int | None = None) -> list[Candidate]:
    """Each codec × compression × store that ran ``operation`` (on ``records`` records, when given) and
    verified: its time, bytes stored and peak memory."""
    found = []
    for group, cells in _groups([r for r in results if records is None or r.params.get("records") == records]).items():
        result = cells.get(operation)
        if result is not None and result.ok:
            found.append(Candidate(_name(group), result.summary("wall_ns"), _size(cells),
                                   result.median("alloc_bytes"), cell=result))
    return found


def _steps(frontier: Sequence[Candidate]) -> str:
    return " → ".join(f"{c.name} ({format_ns(c.value('time'))}, {format_bytes(c.size)})" for c in frontier)


@study_answer("matrix")
def matrix_answer(results: Sequence[CellResult], options: RunOptions) -> Answer | None:
    """Per operation (read one, read many, write): the best on time, on bytes stored and on memory, and the
    time-vs-size trade-off; candidates of one operation and one record count only."""
    counts = sorted({int(r.params.get("records", 0)) for r in results if r.suite == "matrix"})
    per_operation = [(f"{label} ({n:,} records)" if len(counts) > 1 else label, candidates_of(results, op, n))
                     for n in counts for op, label in ANSWERED]
    if not any(found for _, found in per_operation):
        return None
    result = Answer("matrix", f"which codec, compression and store for these {'/'.join(f'{n:,}' for n in counts)} "
                    "records, per operation")
    for label, found in per_operation:
        if not found:
            continue
        part = answer("matrix", "", found, time=f"{label}: fastest", size=f"{label}: fewest bytes stored",
                      memory=f"{label}: least peak memory")
        result.bests += part.bests
        if len(part.frontier) > 1:
            result.summary.append(f"{label}: trade-off, fastest to smallest (none is beaten on both time and "
                                  f"bytes stored): {_steps(part.frontier)}")
        elif part.frontier:
            result.summary.append(f"{label}: no trade-off: {part.frontier[0].name} is both the fastest and the "
                                  "smallest")
    return result


study_charts("matrix", ChartPlan(group="operation"))  # one chart per operation, stores side by side
study_figure("matrix", "the memory store's cells are CPU work in the worker's thread (thread CPU time); every other store waits on a file or a server (wall time)")


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
