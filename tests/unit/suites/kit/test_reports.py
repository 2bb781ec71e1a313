"""A study registers one report, one answer and one chart plan; a second of any fails at import, naming both."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from stratabench.errors import StratabenchError
from stratabench.options import RunOptions
from stratabench.report.charts import ChartPlan
from stratabench.report.table import Table
from stratabench.results.records import CellResult
from stratabench.suites.kit import reports
from stratabench.suites.kit.reports import answer_of, report_of, study_answer, study_charts, study_report


def _tables(results: Sequence[CellResult], options: RunOptions) -> list[Table]:
    return []


def _other_tables(results: Sequence[CellResult], options: RunOptions) -> list[Table]:
    return []


@pytest.fixture(autouse=True)
def _registries_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    reports._discover()  # the studies register into the real tables; each test then works on a copy
    for table in ("_REPORTS", "_ANSWERS", "_CHARTS", "_FIGURES"):
        monkeypatch.setattr(reports, table, dict(getattr(reports, table)))


def test_a_second_report_for_one_suite_is_refused() -> None:
    study_report("twice")(_tables)
    study_report("twice")(_tables)  # the same function again (a module imported twice) is no conflict
    with pytest.raises(StratabenchError, match=r"two study reports are registered for suite 'twice': .*test_reports"):
        study_report("twice")(_other_tables)
    assert report_of("twice") is _tables


def test_a_second_answer_or_chart_plan_is_refused() -> None:
    study_answer("twice")(lambda results, options: None)
    with pytest.raises(StratabenchError, match="two study answers"):
        study_answer("twice")(lambda results, options: None)
    study_charts("twice", ChartPlan(sweep="n"))
    with pytest.raises(StratabenchError, match="two chart plans"):
        study_charts("twice", ChartPlan(sweep="n"))
    assert answer_of("twice") is not None


def test_every_study_registered_its_report_once() -> None:
    for suite in ("bulkload", "cache", "load", "parking", "treestore"):
        assert report_of(suite) is not None, suite


def test_every_study_states_its_judged_figure_and_the_report_counts_the_cells_on_each() -> None:
    from stratabench.results.records import MetricResult
    from stratabench.suites.kit.reports import figure_note, run_report

    assert {"bulkload", "cache", "entities", "parking", "treestore"} <= set(reports._FIGURES)
    timed = {"wall_ns": MetricResult.of([2.0]), "thread_cpu_ns": MetricResult.of([1.0])}
    cells = [CellResult("cache", "memory", {}, "python", "ok", metrics=timed, judged="thread_cpu_ns"),
             CellResult("cache", "sqlite", {}, "python", "ok", metrics=timed, judged="wall_ns"),
             CellResult("cache", "redis", {}, "python", "ok", metrics=timed, judged="wall_ns")]
    note = figure_note("cache", cells)
    assert note is not None and note.startswith("Judged figure: thread_cpu_ns for 1 cell, wall_ns for 2 cells; ")
    assert reports._FIGURES["cache"] in note
    report = run_report(cells, {"options": {}})
    assert note in report.sections[0].tables[0].notes
    assert figure_note("cache", [CellResult("cache", "old", {}, "python", "ok", metrics=timed)]) == (
        "Judged figure: wall_ns for every cell (measured before cells named the figure they are judged on).")
    with pytest.raises(StratabenchError, match="two figure statements are registered for suite 'cache'"):
        reports.study_figure("cache", "another reason")
