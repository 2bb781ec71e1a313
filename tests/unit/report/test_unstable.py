"""Cells flagged unstable: "unstable" in their status, and their reasons with figures under the suite's tables."""

from __future__ import annotations

from stratabench.report.generic import (NOT_REPEATS, not_repeats_of, not_repeats_table, status_text, unstable_of,
                                      unstable_table)
from stratabench.results.records import CellResult, MetricResult
from stratabench.suites.kit.reports import run_report

REASON = "stdev 14.2% of the mean (> 10.0%)"


def cell(name: str, flags: tuple[str, ...] = ()) -> CellResult:
    return CellResult("generic-suite", name, {}, "python", "ok",
                      metrics={"wall_ns": MetricResult.of([100.0, 101.0, 99.0, 100.0, 102.0, 98.0])}, flags=flags)


def test_a_flagged_cell_gives_its_reasons_not_a_bare_true() -> None:
    flagged = cell("noisy", (REASON,))
    assert unstable_of(flagged) == [REASON]
    assert status_text(flagged) == "unstable"
    assert unstable_of(cell("steady")) == [] and status_text(cell("steady")) == ""


def test_the_flagged_cells_are_listed_with_their_figures_under_the_suites_tables() -> None:
    results = [cell("steady"), cell("noisy", (REASON, "min..max -30.0% .. +2.0% of the median"))]
    table = unstable_table("generic-suite", results)
    assert table is not None and "1 of 2 cells flagged" in table.title
    assert table.rows == [{"cell": "noisy", "why": f"{REASON}; min..max -30.0% .. +2.0% of the median"}]
    assert unstable_table("generic-suite", [cell("steady")]) is None
    section = run_report(results, {}).sections[0]
    assert section.tables[-1].title == table.title


def test_a_cell_whose_samples_are_not_repeats_says_so_and_why_instead_of_steady_or_unstable() -> None:
    why = "only try 1 does the work (try 1 9 ms, the 2 later median 0.1 ms)"
    once = CellResult("generic-suite", "once", {}, "python", "ok", metrics={"wall_ns": MetricResult.of([9.0, 0.1, 0.1])},
                      notes={NOT_REPEATS: why})
    assert not_repeats_of(once) == why and not_repeats_of(cell("steady")) is None
    assert status_text(once) == "not repeats: no interval"
    results = [cell("steady"), once, cell("noisy", (REASON,))]
    table = not_repeats_table("generic-suite", results)
    assert table is not None and "1 of 3 cells whose samples are not repeats" in table.title
    assert table.rows == [{"cell": "once", "why": why}]
    assert not_repeats_table("generic-suite", [cell("steady")]) is None
    titles = [t.title for t in run_report(results, {}).sections[0].tables]
    assert titles[-2:] == [unstable_table("generic-suite", results).title, table.title]  # type: ignore[union-attr]
