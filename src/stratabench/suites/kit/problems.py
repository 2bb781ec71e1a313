"""Why cells did not run, said once per reason: the lines under a suite's table.

A server that dies takes dozens of cells with it, all with the same
one-line reason; a table note lists that reason once with the cells it
concerns, so the report stays readable and nothing is hidden (every cell
keeps its own reason in the results file).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from stratabench.report.generic import unstable_of
from stratabench.results.records import CellResult

__all__ = ["problem_lines", "status_summary"]


def problem_lines(results: Iterable[CellResult]) -> list[str]:
    """One line per distinct (status, reason): the cells (or their count and the first and last) and why."""
    groups: dict[tuple[str, str], list[str]] = {}
    for result in results:
        if not result.ok:
            groups.setdefault((result.status, result.error or ""), []).append(result.cell)
    lines = []
    for (status, error), cells in groups.items():
        who = ", ".join(cells) if len(cells) <= 3 else f"{len(cells)} cells ({cells[0]} ... {cells[-1]})"
        lines.append(f"{who}: {status}: {error}")
    return lines


def status_summary(cells: Mapping[str, CellResult], operations: Iterable[str]) -> str:
    """Empty when every operation ran; else one status shared by all, or ``op status`` for each that did not.

    A status column lists only exceptions, so a problem stands out.
    """
    present = [(op, cells[op]) for op in operations if op in cells]
    bad = [(op, result) for op, result in present if not result.ok]
    unsteady = "; ".join(f"{op} unstable" for op, result in present if result.ok and unstable_of(result))
    if not bad:
        return unsteady
    if len(bad) == len(present) and len({result.status for _, result in bad}) == 1:
        return bad[0][1].status
    return "; ".join(f"{op} {result.status}" for op, result in bad)
