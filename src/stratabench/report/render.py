"""From results to tables: each suite's own where the caller knows them, else the generic table."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from stratabench.report.generic import generic_tables
from stratabench.report.table import Table
from stratabench.results.records import CellResult

__all__ = ["render_results"]


def render_results(
    results: Sequence[CellResult], tables_of: Callable[[str, Sequence[CellResult]], list[Table] | None]
) -> list[Table]:
    """Every table of a run, suite by suite, in the order the suites ran.

    ``tables_of(suite, cells)`` returns a study's own tables, or ``None`` for
    the generic table; the caller (a floor above) knows the studies.
    """
    tables: list[Table] = []
    for name in dict.fromkeys(result.suite for result in results):
        cells = [result for result in results if result.suite == name]
        own = tables_of(name, cells)
        tables += generic_tables(cells) if own is None else own
    return tables
