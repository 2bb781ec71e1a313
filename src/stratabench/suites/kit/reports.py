"""Each study's report, registered by its package; the run's tables looked up here.

A study declares its report once with ``@study_report("NAME")`` on a
function of (results, run options) → tables. The generic report code
(:mod:`stratabench.report.render`) receives the lookup and never names a
suite; a suite with no registered report gets the generic table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from stratabench.options import RunOptions
from stratabench.report.render import render_results
from stratabench.report.table import Table
from stratabench.results.records import CellResult

__all__ = ["StudyReport", "report_of", "run_tables", "study_report"]

StudyReport = Callable[[Sequence[CellResult], RunOptions], list[Table]]
"""A study's tables from its cells' results and the run's options."""

_REPORTS: dict[str, StudyReport] = {}


def study_report(suite: str) -> Callable[[StudyReport], StudyReport]:
    """Register the decorated function as the report of ``suite``."""

    def register(report: StudyReport) -> StudyReport:
        _REPORTS[suite] = report
        return report

    return register


def report_of(suite: str) -> StudyReport | None:
    """The registered report of ``suite``, or ``None`` (its package is imported to find it)."""
    from stratabench.suites import SUITES

    if suite in SUITES:  # discovering the suites imports every study package, and so its report
        return _REPORTS.get(suite)
    return None


def run_tables(results: Sequence[CellResult], header: dict[str, Any]) -> list[Table]:
    """Every table of a run, suite by suite, each study's own where it declares one."""
    options = RunOptions.from_json(header.get("options") or {})

    def tables_of(suite: str, cells: Sequence[CellResult]) -> list[Table] | None:
        report = report_of(suite)
        return None if report is None else report(cells, options)

    return render_results(results, tables_of)
