"""The load report, from a results file of made-up client reports: every format, the knee table and chart."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from stratabench.report.formats import REPORTERS
from stratabench.report.formats.terminal import TerminalReporter
from stratabench.results.format import ResultsFile, load
from stratabench.suites.kit.reports import run_report
from tests.unit.load.reports import write_load_run

@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> ResultsFile:
    path = tmp_path_factory.mktemp("load") / "run.jsonl"
    write_load_run(path)
    return load(path)


def _rendered(results: ResultsFile, fmt: str, detail: str = "tables") -> str:
    reporter = TerminalReporter(100) if fmt == "terminal" else REPORTERS.get(fmt)()
    return reporter.render_report(run_report(results.cells, results.header, detail))  # type: ignore[arg-type]


def test_the_terminal_shows_each_configuration_and_the_sweep_with_its_knee(results: ResultsFile) -> None:
    text = _rendered(results, "terminal")
    assert "load: redis://127.0.0.1:1/0, 8 keys" in text
    assert re.search(r"get\s+2 Python\s+closed\s+100\s+80.1 µs\s+90.0 µs\s+0\s+0\n", text), text
    assert re.search(r"get\s+1 Go\s+closed\s+90\s+30.0 µs\s+30.0 µs\s+0\s+2\s+failed, wrong data", text), text
    assert "rate sweep: workload get, 2 clients in Python" in text
    assert "knee: 3,000 requests due per second (3,000 answered, p99 100 µs), the highest rate within" in text
    assert "p99 5.00 ms over the 2.00 ms limit" in text
    assert "get/c1/closed/go: 2 of 450 reads did not return what was written; first: key user000000000007" in text
    assert max(len(line) for line in text.splitlines()) <= 100


def test_every_format_renders_and_html_has_the_knee_chart(results: ResultsFile) -> None:
    for fmt in REPORTERS.names:
        for detail in ("summary", "tables", "full"):
            assert _rendered(results, fmt, detail)
    html = _rendered(results, "html")
    assert "load: throughput against p99 latency, rate by rate" in html
    assert len(re.findall(r'id="load-knee-mark-marked-\d+"', html)) == 1
    assert len(re.findall(r'id="load-knee-mark-past-\d+"', html)) == 1  # 4,000/s, where the sweep stopped
    assert len(re.findall(r'id="load-knee-mark-point-\d+"', html)) == 3
    assert "p99 limit 2.00 ms" in html


def test_machine_formats_keep_numbers(results: ResultsFile) -> None:
    data = json.loads(_rendered(results, "json"))
    (section,) = data["suites"]
    configurations = section["tables"][0]["rows"]
    assert configurations[0]["ops_per_s"] == pytest.approx(100.0) and configurations[0]["p99"] > 80_000
    assert configurations[1]["failed_checks"] == 2
    rows = list(csv.reader(io.StringIO(_rendered(results, "csv"))))
    header = next(row for row in rows if "past the limit" in row or "over_limit" in row)
    assert "rate" in header


def test_a_file_written_before_the_knee_was_noted_still_reports(results: ResultsFile, tmp_path: Path) -> None:
    """Older files have no over_limit note: every measured point counts as within, and nothing fails."""
    cells = [replace(c, notes={k: v for k, v in c.notes.items() if k != "over_limit"}) for c in results.cells]
    text = TerminalReporter(100).render_report(run_report(cells, results.header))
    assert "knee:" in text
