"""JSON: the table model itself, raw values, for other programs."""

from __future__ import annotations

import json
from collections.abc import Sequence

from stratabench.report.formats import REPORTERS
from stratabench.report.formats.base import Reporter
from stratabench.report.table import Table

__all__ = ["JsonReporter"]


@REPORTERS.register("json")
class JsonReporter(Reporter):
    """A JSON list of tables: title, columns, rows of raw values, notes."""

    def render(self, tables: Sequence[Table]) -> str:
        data = [
            {
                "title": table.title,
                "columns": [{"key": c.key, "header": c.header} for c in table.columns],
                "rows": [{c.key: row.get(c.key) for c in table.columns} for row in table.rows],
                "notes": table.notes,
            }
            for table in tables
        ]
        return json.dumps(data, indent=2, default=str) + "\n"
