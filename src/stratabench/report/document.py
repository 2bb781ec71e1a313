"""A whole report: the run's header, then one section per suite.

:class:`Report` is what a format renders when it wants more than tables:
the HTML page reads the header for the environment, each section's tables,
and the cells' results for its charts. Formats that lay out tables only take
:meth:`Report.tables` (the default of :meth:`~stratabench.report.formats.base.Reporter.render_report`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stratabench.report.charts import ChartPlan
from stratabench.report.provenance import provenance
from stratabench.report.table import Table
from stratabench.results.records import CellResult

__all__ = ["Report", "Section"]


@dataclass
class Section:
    """One suite's part of a report.

    Attributes
    ----------
    suite
        The suite's name.
    tables
        Its own tables (the study's, or the generic table).
    charts
        How the suite wants its cells charted (the study declares it through the kit).
    """

    suite: str
    tables: list[Table] = field(default_factory=list)
    charts: ChartPlan = field(default_factory=ChartPlan)


@dataclass
class Report:
    """The header's facts, every suite's section, and the cells they were built from."""

    header: Mapping[str, Any]
    sections: list[Section] = field(default_factory=list)
    results: list[CellResult] = field(default_factory=list)

    @property
    def provenance(self) -> list[tuple[str, str]]:
        """(label, text) facts about the run: machine, load, software, revision, date."""
        go = next((str(r.notes["go_version"]) for r in self.results if r.notes.get("go_version")), None)
        return provenance(self.header, go)

    def tables(self) -> list[Table]:
        """Every section's tables, in reading order."""
        return [table for section in self.sections for table in section.tables]

    def results_of(self, section: Section) -> list[CellResult]:
        """The results of one section's suite."""
        return [result for result in self.results if result.suite == section.suite]
