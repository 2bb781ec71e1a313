"""Plain-text tables for a terminal or a log file, fitted to its width: no colour, no escape codes.

Tables are laid out by rich at the terminal's width (``COLUMNS`` when set,
else the terminal's own, else 100): a table wider than that first leaves out
its low-priority columns (:attr:`Column.priority`, and says so under the
table), then wraps the text of the rest. Notes are wrapped to the same
width. The borders are ASCII, so the output reads the same in a terminal,
a CI log and a file, and golden files pin it at a fixed width.
"""

from __future__ import annotations

import io
import re
import shutil
import textwrap
from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.table import Table as RichTable

from stratabench.report.formats import REPORTERS
from stratabench.report.formats.base import Reporter
from stratabench.report.table import Column, Table

__all__ = ["DEFAULT_WIDTH", "TEXT_WRAP", "TerminalReporter", "terminal_width", "visible"]

DEFAULT_WIDTH = 100
"""The width when neither ``COLUMNS`` nor a terminal says otherwise (a file, a pipe)."""

TEXT_WRAP = 24
"""Width at which a text column is content to wrap, when fitting a table."""

_ASCII_RULE = box.Box("    \n    \n -- \n    \n    \n -- \n    \n    \n", ascii=True)


def terminal_width() -> int:
    """``COLUMNS`` if set, else the terminal's width, else :data:`DEFAULT_WIDTH`; never below 40."""
    return max(40, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def _rich_table(table: Table, columns: Sequence[Column]) -> RichTable:
    rich = RichTable(box=_ASCII_RULE, show_edge=False, pad_edge=False, padding=(0, 1), collapse_padding=True,
                     header_style="", title=None)
    for column in columns:
        rich.add_column(column.header, justify=column.align, overflow="fold", no_wrap=False)
    for row in table.rows:
        rich.add_row(*[column.format(row.get(column.key)) for column in columns])
    return rich


#: Control characters but the newline: C0, DEL and C1 (ESC starts the terminal's escape sequences).
_CONTROLS = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """``text`` with every control character but the newline shown as an escape (``\\x1b``), never sent.

    Names in a report come from the user's data, files and URLs; an escape
    sequence among them would move the cursor, retitle the window or hide
    lines of the report in the terminal that shows it.
    """
    return _CONTROLS.sub(lambda match: ascii(match[0])[1:-1], text)


@REPORTERS.register("terminal")
class TerminalReporter(Reporter):
    """Plain-text tables fitted to the terminal's width (COLUMNS), notes wrapped under each."""

    def __init__(self, width: int | None = None) -> None:
        self.width = width or terminal_width()

    def _console(self, out: io.StringIO) -> Console:
        return Console(file=out, width=self.width, color_system=None, force_terminal=False, no_color=True,
                       highlight=False, emoji=False, markup=False, legacy_windows=False, soft_wrap=False)

    def _fitted(self, table: Table) -> tuple[RichTable, list[Column]]:
        """The table without as many low-priority columns as it takes to fit, and the columns left out.

        A table fits when its numbers need no wrapping: text columns (left-aligned) count at most
        :data:`TEXT_WRAP` characters, since wrapping a long name or reason is fine, and a cut number is not.
        """
        shown = list(table.columns)
        dropped: list[Column] = []
        rows = table.formatted()
        index = {column.key: i for i, column in enumerate(table.columns)}

        def natural(column: Column) -> int:
            cells = [row[index[column.key]] for row in rows] + [column.header]
            widest = max(len(cell) for cell in cells)
            if column.align == "left":
                longest_word = max((len(word) for cell in cells for word in cell.split()), default=0)
                return min(widest, max(TEXT_WRAP, longest_word))
            return widest

        while True:
            needed = sum(natural(column) for column in shown) + 2 * (len(shown) - 1)
            droppable = [c for c in shown if c.priority > 0]
            if needed <= self.width or not droppable:
                return _rich_table(table, shown), dropped
            # Leave out the least important column; among equals, the rightmost.
            worst = max(droppable, key=lambda c: (c.priority, shown.index(c)))
            shown.remove(worst)
            dropped.append(worst)

    def render(self, tables: Sequence[Table]) -> str:
        out = io.StringIO()
        console = self._console(out)
        blocks = []
        for table in tables:
            rich, dropped = self._fitted(table)
            out.seek(0)
            out.truncate()
            console.print(rich)
            body = "\n".join(line.rstrip() for line in out.getvalue().rstrip("\n").splitlines())
            notes = list(table.notes)
            if dropped:
                notes.append(f"left out to fit {self.width} columns: {', '.join(c.header for c in dropped)} "
                             "(widen the terminal, or use --format markdown, csv or json)")
            wrapped = [textwrap.fill(note, self.width, subsequent_indent="  ", break_on_hyphens=False)
                       for note in notes]
            title = textwrap.fill(table.title, self.width, subsequent_indent="  ")
            blocks.append("\n".join([title, "", body] + ([""] + wrapped if wrapped else [])))
        return visible("\n\n".join(blocks) + "\n")
