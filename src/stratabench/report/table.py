"""The neutral table model every report is built from.

A suite builds :class:`Table` objects from results once; the terminal,
Markdown, CSV and JSON renderers only lay them out. Cells hold raw values
(numbers, strings, ``None`` for not measured) and each column knows how to
format its values, so CSV and JSON get the numbers while terminal and
Markdown get readable text. CSV columns come from the model, never from a
hand-kept list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Column", "Table", "text"]


def text(value: Any) -> str:
    """The default formatter: ``-`` for not measured, ``str`` otherwise."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


@dataclass(frozen=True)
class Column:
    """One column of a table.

    Attributes
    ----------
    key
        Identifies the column in rows and in CSV/JSON output.
    header
        What a person reads at the top of the column.
    align
        ``right`` for numbers, ``left`` for names.
    format
        Turns one raw value into text for terminal and Markdown.
    """

    key: str
    header: str
    align: Literal["left", "right"] = "left"
    format: Callable[[Any], str] = text


@dataclass
class Table:
    """A titled table with notes underneath.

    Attributes
    ----------
    title
        One line above the table.
    columns
        In display order.
    rows
        Each row maps column keys to raw values; missing keys are ``None``.
    notes
        Lines under the table: legends, verdicts, warnings.
    """

    title: str
    columns: Sequence[Column]
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def formatted(self) -> list[list[str]]:
        """Every row as display strings, in column order."""
        return [[column.format(row.get(column.key)) for column in self.columns] for row in self.rows]
