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


#: What a spreadsheet reads as the start of a formula (OWASP's list for CSV injection).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _inert(value: object) -> object:
    """A text that a spreadsheet would run as a formula, quoted with a leading ``'``; numbers stay numbers.

    Cell names and parameters come from the user's data and URLs: a codec
    named ``=HYPERLINK(...)`` must open as text.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


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
                writer.writerow([_inert(table.title)] + ["" if row[key] is None else _inert(row[key]) for key in keys])
        return out.getvalue()

    def render_report(self, report: Report) -> str:
        tables = report.tables()
        if report.results:
            tables.append(cells_export_table(report.results))
        return self.render(tables)
