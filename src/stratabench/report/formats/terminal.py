"""Plain-text tables for a terminal or a log file: aligned columns, no colour.

No escape codes and no box-drawing, so the same output reads well in a
terminal, a CI log and a file, and golden files can pin it exactly.
"""

from __future__ import annotations

from collections.abc import Sequence

from stratabench.report.formats import REPORTERS
from stratabench.report.formats.base import Reporter
from stratabench.report.table import Table

__all__ = ["TerminalReporter"]


@REPORTERS.register("terminal")
class TerminalReporter(Reporter):
    """Aligned plain-text columns, notes under each table."""

    def render(self, tables: Sequence[Table]) -> str:
        blocks = []
        for table in tables:
            rows = table.formatted()
            headers = [column.header for column in table.columns]
            widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(headers)]

            def line(cells: list[str]) -> str:
                parts = [
                    cell.rjust(width) if column.align == "right" else cell.ljust(width)
                    for cell, width, column in zip(cells, widths, table.columns)
                ]
                return "  ".join(parts).rstrip()

            lines = [table.title, "", line(headers), line(["-" * width for width in widths])]
            lines += [line(row) for row in rows]
            if table.notes:
                lines.append("")
                lines += table.notes
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks) + "\n"
