"""Each report format renders one table model exactly as its golden file says."""

from __future__ import annotations

import pytest

from stratabench.report.compare import ratio
from stratabench.report.formats import REPORTERS
from stratabench.report.formats.terminal import TerminalReporter
from stratabench.report.generic import generic_tables
from stratabench.report.table import Column, Table
from stratabench.results.format import load
from stratabench.units import format_bytes, format_ns
from tests.golden_files import GOLDEN, assert_golden


def sample_table() -> Table:
    table = Table(
        "bulkload: 10 records",
        [Column("name", "name"), Column("wall_ns", "ns/op", "right", format_ns),
         Column("size_bytes", "size", "right", format_bytes), Column("integrity", "integrity")],
    )
    table.rows = [
        {"name": "json/typed", "wall_ns": 105.0, "size_bytes": 1776, "integrity": "ok"},
        {"name": "orjson|raw", "wall_ns": 51.0, "size_bytes": None, "integrity": "FAIL"},
    ]
    table.notes = ["ratios are of medians; ~ marks a difference within noise"]
    return table


@pytest.mark.parametrize("name", REPORTERS.names)  # a new format fails here until its golden file exists
def test_format_matches_golden(name: str) -> None:
    reporter = TerminalReporter(100) if name == "terminal" else REPORTERS.get(name)()
    assert_golden(f"report/sample.{name}.txt", reporter.render([sample_table()]))


def test_generic_table_of_the_golden_results() -> None:
    results = load(GOLDEN / "results" / "v1.jsonl")
    text = TerminalReporter(100).render(generic_tables(results.cells))
    assert_golden("report/generic.terminal.txt", text)


def test_csv_columns_come_from_the_model() -> None:
    text = REPORTERS.get("csv")().render([sample_table()])
    assert text.splitlines()[0] == "table,name,wall_ns,size_bytes,integrity"


def test_ratio_flags_overlap() -> None:
    results = load(GOLDEN / "results" / "v1.jsonl")
    slow, fast = (cell.summary("wall_ns") for cell in results.cells)
    r = ratio(slow, fast)
    assert r is not None and r.value == pytest.approx(105 / 51) and not r.within_noise
    assert str(r) == "2.06×"
    same = ratio(slow, slow)
    assert same is not None and same.within_noise and str(same) == "1.00× ~"
    assert ratio(slow, None) is None
