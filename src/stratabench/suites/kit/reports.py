"""Each study's report, registered by its package; the run's tables looked up here.

A study declares its report once with ``@study_report("NAME")`` on a
function of (results, run options) → tables. The generic report code
(:mod:`stratabench.report.render`) receives the lookup and never names a
suite; a suite with no registered report gets the generic table. A study
may also declare how its cells are charted, ``study_charts("NAME", ChartPlan(...))``
(the parameter a growth plot sweeps, one time chart per operation...).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stratabench.options import RunOptions
from stratabench.report.charts import ChartPlan
from stratabench.report.document import Report, Section
from stratabench.report.generic import generic_tables
from stratabench.report.table import Table
from stratabench.results.records import CellResult

__all__ = ["ChartPlan", "StudyReport", "report_of", "run_report", "run_tables", "study_charts", "study_report"]

StudyReport = Callable[[Sequence[CellResult], RunOptions], list[Table]]
"""A study's tables from its cells' results and the run's options."""

_REPORTS: dict[str, StudyReport] = {}
_CHARTS: dict[str, ChartPlan] = {}


def study_report(suite: str) -> Callable[[StudyReport], StudyReport]:
    """Register the decorated function as the report of ``suite``."""

    def register(report: StudyReport) -> StudyReport:
        _REPORTS[suite] = report
        return report

    return register


def study_charts(suite: str, plan: ChartPlan) -> None:
    """Declare how the HTML report charts ``suite``'s cells (the default plan suits most suites)."""
    _CHARTS[suite] = plan


def report_of(suite: str) -> StudyReport | None:
    """The registered report of ``suite``, or ``None`` (its package is imported to find it)."""
    from stratabench.suites import SUITES

    if suite in SUITES:  # discovering the suites imports every study package, and so its report
        return _REPORTS.get(suite)
    return None


def run_tables(results: Sequence[CellResult], header: Mapping[str, Any]) -> list[Table]:
    """Every table of a run, suite by suite, each study's own where it declares one."""
    return run_report(results, header).tables()


def run_report(results: Sequence[CellResult], header: Mapping[str, Any]) -> Report:
    """The run's report: its header, then per suite its tables and how its cells are charted."""
    options = RunOptions.from_json(header.get("options") or {})
    report = Report(header, results=list(results))
    for suite in dict.fromkeys(result.suite for result in results):
        cells = [result for result in results if result.suite == suite]
        own = report_of(suite)
        tables = generic_tables(cells) if own is None else own(cells, options)
        report.sections.append(Section(suite, tables, _CHARTS.get(suite, ChartPlan())))
    return report
