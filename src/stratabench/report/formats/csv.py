"""CSV: raw values, one block per table, columns keyed as in the table model."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from stratabench.report.formats import REPORTERS
from stratabench.report.formats.base import Reporter
from stratabench.report.table import Table

__all__ = ["CsvReporter"]


@REPORTERS.register("csv")
class CsvReporter(Reporter):
    """CSV with a ``table`` column first, so several tables share one file."""

    def render(self, tables: Sequence[Table]) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        for table in tables:
            writer.writerow(["table"] + [column.key for column in table.columns])
            for row in table.rows:
                writer.writerow([table.title] + ["" if row.get(c.key) is None else row.get(c.key) for c in table.columns])
        return out.getvalue()
