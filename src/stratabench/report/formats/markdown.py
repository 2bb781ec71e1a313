"""GitHub-flavoured Markdown tables, a heading per table."""

from __future__ import annotations

from collections.abc import Sequence

from stratabench.report.formats import REPORTERS
from stratabench.report.formats.base import Reporter
from stratabench.report.table import Table

__all__ = ["MarkdownReporter"]


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|")


@REPORTERS.register("markdown")
class MarkdownReporter(Reporter):
    """Markdown: ``### title``, a pipe table, notes as a list."""

    def render(self, tables: Sequence[Table]) -> str:
        blocks = []
        for table in tables:
            header = "| " + " | ".join(_escape(c.header) for c in table.columns) + " |"
            rule = "| " + " | ".join("---:" if c.align == "right" else "---" for c in table.columns) + " |"
            body = ["| " + " | ".join(_escape(cell) for cell in row) + " |" for row in table.formatted()]
            notes = [f"- {note}" for note in table.notes]
            blocks.append("\n".join([f"### {table.title}", "", header, rule, *body] + ([""] + notes if notes else [])))
        return "\n\n".join(blocks) + "\n"
