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
    for table in ("_REPORTS", "_ANSWERS", "_CHARTS"):
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
