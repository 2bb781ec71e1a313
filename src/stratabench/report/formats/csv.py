"""CSV: raw values, one block per table, columns keyed as in the table model.

Numbers stay numbers (a ratio is its float, with a ``KEY_within_noise``
column beside it); a whole report adds the every-cell table with each
metric's median, confidence interval and the interval's level, in columns
named with their unit (``wall_ns_ci_low``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

from stratabench.report.formats import REPORTERS
from stratabench.report.formats.base import Reporter
from stratabench.report.generic import cells_export_table
from stratabench.report.table import Table

if TYPE_CHECKING:
    from stratabench.report.document import Report

__all__ = ["CsvReporter"]


@REPORTERS.register("csv")
class CsvReporter(Reporter):
    """CSV with a ``table`` column first, so several tables share one file."""

    def render(self, tables: Sequence[Table]) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        for table in tables:
            keys, rows = table.exported()
            writer.writerow(["table"] + keys)
            for row in rows:
                writer.writerow([table.title] + ["" if row[key] is None else row[key] for key in keys])
        return out.getvalue()

    def render_report(self, report: Report) -> str:
        tables = report.tables()
        if report.results:
            tables.append(cells_export_table(report.results))
        return self.render(tables)
