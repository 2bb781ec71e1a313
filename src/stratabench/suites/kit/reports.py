"""Each study's report and answer, registered by its package; the run's report built here.

A study declares its report once with ``@study_report("NAME")`` on a
function of (results, run options) → tables, and its answer with
``@study_answer("NAME")`` on a function of (results, run options) →
:class:`~stratabench.report.answer.Answer` (or ``None``). It may also declare
how the HTML page charts its cells, ``study_charts("NAME", ChartPlan(...))``
(the parameter a growth plot sweeps, one time chart per operation...), and
it states which timed figure its verdicts use and why,
``study_figure("NAME", "...")``: the report prints it, with how many cells
were judged on each figure, under the study's first table. The
generic report code (:mod:`stratabench.report`) never names a suite; a suite
with no registered report gets the generic table, one with no registered
answer the generic answer over its cells.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from stratabench.errors import StratabenchError
from stratabench.options import RunOptions
from stratabench.report.answer import Answer
from stratabench.report.charts import ChartPlan
from stratabench.report.document import Detail, Report, Section
from stratabench.report.generic import generic_answer, generic_tables, not_repeats_table, unstable_table
from stratabench.report.table import Table
from stratabench.results.records import CPU_METRIC, WALL_METRIC, CellResult
from stratabench.suites.kit.suite import SUITES

__all__ = ["ChartPlan", "StudyAnswer", "StudyReport", "answer_of", "figure_note", "report_of", "run_report",
           "study_answer", "study_charts", "study_figure", "study_report", "tables_of"]

StudyReport = Callable[[Sequence[CellResult], RunOptions], list[Table]]
"""A study's tables from its cells' results and the run's options."""

StudyAnswer = Callable[[Sequence[CellResult], RunOptions], Answer | None]
"""A study's answer from its cells' results and the run's options."""

_REPORTS: dict[str, StudyReport] = {}
_ANSWERS: dict[str, StudyAnswer] = {}
_CHARTS: dict[str, ChartPlan] = {}
_FIGURES: dict[str, str] = {}

_T = TypeVar("_T")


def _claim(table: dict[str, _T], what: str, suite: str, value: _T) -> _T:
    """Enter ``value`` as ``suite``'s ``what``, refusing a second one as :class:`~stratabench.registry.Registry` does.

    Two studies (or one study twice under two names) claiming one suite's
    report would otherwise leave whichever was imported last, silently.
    """
    known = table.get(suite)
    if known is not None and known is not value:
        where = [getattr(v, "__module__", type(v).__module__) for v in (known, value)]
        raise StratabenchError(f"two {what}s are registered for suite {suite!r}: {where[0]} and {where[1]}; "
                               "remove one")  # fmt: skip
    table[suite] = value
    return value


def study_report(suite: str) -> Callable[[StudyReport], StudyReport]:
    """Register the decorated function as the report of ``suite``; a second report of ``suite`` fails at import."""

    def register(report: StudyReport) -> StudyReport:
        return _claim(_REPORTS, "study report", suite, report)

    return register


def study_answer(suite: str) -> Callable[[StudyAnswer], StudyAnswer]:
    """Register the decorated function as the answer ``suite`` opens with; a second one fails at import."""

    def register(function: StudyAnswer) -> StudyAnswer:
        return _claim(_ANSWERS, "study answer", suite, function)

    return register


def study_charts(suite: str, plan: ChartPlan) -> None:
    """Declare how the HTML report charts ``suite``'s cells (the default plan suits most suites); once per suite."""
    _claim(_CHARTS, "chart plan", suite, plan)


def study_figure(suite: str, why: str) -> None:
    """State, once per suite, which timed figure the study's verdicts use and why (a sentence, ending without a stop)."""
    _claim(_FIGURES, "figure statement", suite, why)


def figure_note(suite: str, cells: Sequence[CellResult]) -> str | None:
    """The line saying which figure judged the suite's cells: the study's reason and the count on each figure.

    ``None`` when no cell was timed.
    """
    counts: dict[str, int] = {}
    timed = [cell for cell in cells if cell.ok and any(name in cell.metrics for name in (CPU_METRIC, WALL_METRIC))]
    for cell in timed:
        counts[cell.judged_metric] = counts.get(cell.judged_metric, 0) + 1
    if not counts:
        return None
    if all(cell.judged is None for cell in timed):
        return (f"Judged figure: {WALL_METRIC} for every cell (measured before cells named the figure they are "
                "judged on).")
    why = _FIGURES.get(suite)
    judged = ", ".join(f"{name} for {count} cell{'s' if count > 1 else ''}" for name, count in sorted(counts.items()))
    return (f"Judged figure: {judged}" + (f"; {why}" if why else "") + ". Intervals, unstable flags, ratios, "
            "verdicts and targets use it (a ratio with a cell judged on wall time is of wall time).")


def _discover() -> None:
    # Discovering the suites imports every package under suites/, and so each report: a
    # study's, and that of results no suite writes (``load``).
    _ = SUITES.names  # reading it imports every package


def report_of(suite: str) -> StudyReport | None:
    """The registered report of ``suite``, or ``None`` (its package is imported to find it)."""
    _discover()
    return _REPORTS.get(suite)


def tables_of(suite: str, results: Sequence[CellResult], options: RunOptions) -> list[Table]:
    """The tables of ``suite``'s cells: its registered study report, else the generic table."""
    own = report_of(suite)
    return generic_tables(results) if own is None else own(results, options)


def answer_of(suite: str) -> StudyAnswer | None:
    """The registered answer of ``suite``, or ``None``."""
    _discover()
    return _ANSWERS.get(suite)


def run_report(results: Sequence[CellResult], header: Mapping[str, Any], detail: Detail = "tables") -> Report:
    """The run's report: provenance, then per suite its answer, its tables, every cell and its chart plan."""
    options = RunOptions.from_json(header.get("options") or {})
    report = Report(header, detail=detail, results=list(results))
    _discover()
    for suite in dict.fromkeys(result.suite for result in results):
        cells = [result for result in results if result.suite == suite]
        own, answering = report_of(suite), answer_of(suite)
        tables = tables_of(suite, cells, options)
        figure = figure_note(suite, cells)
        if figure is not None and tables:
            tables[0].notes = [*tables[0].notes, figure]
        listed = [table for table in (unstable_table(suite, cells), not_repeats_table(suite, cells)) if table]
        report.sections.append(Section(
            suite,
            answering(cells, options) if answering is not None else generic_answer(suite, cells),
            [*tables, *listed],
            [] if own is None else generic_tables(cells),
            _CHARTS.get(suite, ChartPlan()),
        ))
    return report
