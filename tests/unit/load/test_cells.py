from __future__ import annotations

import json

from stratabench.load.cells import load_cell
from stratabench.load.histogram import merge
from stratabench.load.run import merge_reports
from stratabench.results.format import cell_to_json
from tests.unit.load.reports import SPEC, report


def test_a_load_cell_keeps_interval_samples_percentiles_and_every_histogram() -> None:
    result = merge_reports(SPEC, [report(0, [[1000] * 10, [1000] * 10, [1000] * 10, [1000] * 10, [1900] * 10]),
                                  report(1, [[1200] * 5] * 5)])
    cell = load_cell(result, params={"codec": "json"})
    assert cell.ok and cell.cell == "get/c2/closed"
    assert cell.params["clients"] == 2 and cell.params["rate"] is None and cell.params["codec"] == "json"
    assert cell.metrics["ops_per_s"].samples == (15.0, 15.0, 15.0, 15.0, 15.0)  # 15 answers in each 1-s interval
    assert cell.metrics["latency_ns"].samples == (1200.0, 1200.0, 1200.0, 1200.0, 1900.0)  # each interval's p99
    assert cell.notes["latency"]["p99_ns"] == 1900
    assert merge(cell.notes["client_histograms"]).equals(merge([cell.notes["histogram"]]))
    assert cell.integrity is not None and cell.integrity.ok
    json.dumps(cell_to_json(cell), allow_nan=False)  # the record is valid JSON, histograms included


def test_a_failed_check_makes_the_cell_fail_its_integrity() -> None:
    bad = report(0, [[1000]] * 5, failed_checks=1, first_failed_check="key user000000000001: the key is missing")
    cell = load_cell(merge_reports(SPEC, [bad]))
    assert cell.status == "failed" and cell.error is not None
    assert cell.integrity is not None and not cell.integrity.ok
    assert cell.integrity.detail == "key user000000000001: the key is missing"


def test_a_configuration_that_answered_nothing_has_no_metrics() -> None:
    nothing = report(0, [[]] * 5, fatal="cannot connect to redis at 127.0.0.1:1: refused")
    cell = load_cell(merge_reports(SPEC, [nothing]))
    assert cell.status == "failed" and cell.metrics == {}
    assert cell.error is not None and "cannot connect" in cell.error
