"""A whole report: where it was measured, then each suite's answer and tables.

:class:`Report` is what every format renders: the run's provenance first,
then one :class:`Section` per suite, each opening with its :class:`Answer`.
How much follows the answer is the reader's choice (:data:`DETAILS`):

- ``summary``: the provenance and each suite's answer;
- ``tables``: and each suite's own tables (the default);
- ``full``: and every cell of each suite with its loops, spread and status.

Formats that lay out tables take :meth:`Report.tables`; a format may read
the sections and answers directly (the JSON export keeps the answers' numbers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from stratabench.errors import UsageError
from stratabench.report.answer import Answer
from stratabench.report.charts import ChartPlan
from stratabench.report.provenance import provenance, provenance_table
from stratabench.report.table import Table
from stratabench.results.records import CellResult

__all__ = ["DETAILS", "Detail", "Report", "Section", "check_detail"]

Detail = Literal["summary", "tables", "full"]
DETAILS: tuple[str, ...] = get_args(Detail)


def check_detail(value: str) -> Detail:
    """``value`` as a :data:`Detail`, or a one-line error naming the choices."""
    if value not in DETAILS:
        raise UsageError(f"--detail {value!r}: choose one of {', '.join(DETAILS)}")
    return value  # type: ignore[return-value]


@dataclass
class Section:
    """One suite's part of a report.

    Attributes
    ----------
    suite
        The suite's name.
    answer
        What it says first; ``None`` when no cell measured anything it compares.
    tables
        Its own tables (the study's, or the generic table).
    cells
        Every cell with its loops, spread and status (shown with ``full``).
    charts
        How the suite wants its cells charted (the study declares it through the kit).
    """

    suite: str
    answer: Answer | None
    tables: list[Table] = field(default_factory=list)
    cells: list[Table] = field(default_factory=list)
    charts: ChartPlan = field(default_factory=ChartPlan)


@dataclass
class Report:
    """The header's facts and every suite's section, with how much detail to show.

    ``results`` are the cells the report was built from, for the machine
    exports' every-cell table.
    """

    header: Mapping[str, Any]
    sections: list[Section] = field(default_factory=list)
    detail: Detail = "tables"
    results: list[CellResult] = field(default_factory=list)

    @property
    def provenance(self) -> list[tuple[str, str]]:
        """(label, text) facts about the run: machine, load, software, revision, date."""
        return provenance(self.header, self.results)

    def tables(self) -> list[Table]:
        """Everything to show, as tables in reading order."""
        tables = [provenance_table(self.header, self.results)] if self.provenance else []
        for section in self.sections:
            if section.answer is not None:
                tables.append(section.answer.table())
            if self.detail != "summary":
                tables += section.tables
            if self.detail == "full":
                tables += section.cells
        return tables

    def results_of(self, section: Section) -> list[CellResult]:
        """The results of one section's suite."""
        return [result for result in self.results if result.suite == section.suite]
