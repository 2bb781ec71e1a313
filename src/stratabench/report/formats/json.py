"""JSON: the report's data for other programs: provenance, answers, tables of raw values, every cell.

Numbers stay numbers: a ratio is its float (with ``KEY_within_noise``
beside it), times are in ns and sizes in bytes as the column keys say, and
every cell carries each metric's median, confidence interval and level.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from stratabench.report.formats import REPORTERS
from stratabench.report.formats.base import Reporter
from stratabench.report.generic import cells_export_table
from stratabench.report.table import Table

if TYPE_CHECKING:
    from stratabench.report.document import Report

__all__ = ["JsonReporter"]


def _table(table: Table) -> dict[str, Any]:
    keys, rows = table.exported()
    headers = {c.key: c.header for c in table.columns}
    return {
        "title": table.title,
        "columns": [{"key": key, "header": headers.get(key, key.replace("_", " "))} for key in keys],
        "rows": rows,
        "notes": table.notes,
    }


@REPORTERS.register("json")
class JsonReporter(Reporter):
    """A JSON list of tables (title, columns, rows of raw values, notes); a whole report is an object."""

    def render(self, tables: Sequence[Table]) -> str:
        return json.dumps([_table(table) for table in tables], indent=2, default=str) + "\n"

    def render_report(self, report: Report) -> str:
        data = {
            "provenance": dict(report.provenance),
            "environment": report.header.get("environment", {}),
            "detail": report.detail,
            "suites": [
                {"suite": section.suite,
                 "answer": None if section.answer is None else section.answer.to_json(),
                 "tables": [_table(t) for t in (section.tables if report.detail != "summary" else [])
                            + (section.cells if report.detail == "full" else [])]}
                for section in report.sections
            ],
            "cells": _table(cells_export_table(report.results))["rows"] if report.results else [],
        }
        return json.dumps(data, indent=2, default=str) + "\n"
