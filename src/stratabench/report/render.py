"""From results to tables: each suite shapes its own, unknown suites get the generic table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratabench.options import RunOptions
from stratabench.report.generic import generic_tables
from stratabench.report.table import Table
from stratabench.results.records import CellResult

__all__ = ["render_results"]


def render_results(results: Sequence[CellResult], header: dict[str, Any]) -> list[Table]:
    """Every table of a run, suite by suite, in the order the suites ran."""
    from stratabench.suites import SUITES

    options = RunOptions.from_json(header.get("options") or {})
    tables: list[Table] = []
    for name in dict.fromkeys(result.suite for result in results):
        cells = [result for result in results if result.suite == name]
        if name in SUITES:
            tables += SUITES.info(name).cls(options).tables(cells, header)
        else:
            tables += generic_tables(cells)
    return tables
