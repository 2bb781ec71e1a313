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

__all__ = ["Column", "Table", "exported", "text"]


def text(value: Any) -> str:
    """The default formatter: ``-`` for not measured, ``str`` otherwise."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def exported(value: Any) -> Any:
    """A cell's value for CSV and JSON: numbers, strings, booleans and ``None`` as they are; a ratio
    (anything with a float ``value``) as that float; anything else as its text."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    number = getattr(value, "value", None)
    if isinstance(number, (int, float)):
        return float(number)
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
    priority
        ``0``: always shown (wrapped when the terminal is narrow). Higher
        numbers are detail a narrow terminal leaves out first; the table
        then says which columns it left out (every format but the terminal
        keeps them all).
    """

    key: str
    header: str
    align: Literal["left", "right"] = "left"
    format: Callable[[Any], str] = text
    priority: int = 0


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
    sortable
        A long table of figures a reader wants ranked their own way: the
        HTML page sorts it by any column on a click (its raw values, not
        their text).
    """

    title: str
    columns: Sequence[Column]
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sortable: bool = False

    def exported(self) -> tuple[list[str], list[dict[str, Any]]]:
        """Column keys and rows for machines: numbers stay numbers, a ratio is its float, and each ratio
        column gains a ``KEY_within_noise`` column (whether the two intervals overlap)."""
        keys: list[str] = []
        noisy: set[str] = set()
        for column in self.columns:
            keys.append(column.key)
            if any(hasattr(row.get(column.key), "within_noise") for row in self.rows):
                keys.append(f"{column.key}_within_noise")
                noisy.add(column.key)
        rows = []
        for row in self.rows:
            out: dict[str, Any] = {}
            for column in self.columns:
                value = row.get(column.key)
                if column.key in noisy:
                    out[f"{column.key}_within_noise"] = getattr(value, "within_noise", None)
                out[column.key] = exported(value)
            rows.append({key: out.get(key) for key in keys})
        return keys, rows

    def formatted(self) -> list[list[str]]:
        """Every row as display strings, in column order."""
        return [[column.format(row.get(column.key)) for column in self.columns] for row in self.rows]
