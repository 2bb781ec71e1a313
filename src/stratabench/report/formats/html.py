"""A self-contained HTML page: every table, with bars charting times and sizes.

The page needs nothing but itself: the CSS is inline, there is no
JavaScript, and nothing is fetched (no fonts, scripts or images), so it
opens offline and prints. Each table gets a heading, the columns' formatted
text and its notes; in every column of durations or byte sizes a bar
behind each number shows it against the column's largest value, linear
from zero, or on a log scale when the values span more than two orders of
magnitude. Rows that failed or lost data are marked.

A column is charted only when its formatter is :func:`~stratabench.units.format_ns`
or :func:`~stratabench.units.format_bytes` (what :class:`~stratabench.metrics.Metric`
hands out for ``ns`` and ``bytes`` metrics), so counts, loop numbers and
ratios get no bars, and neither does a column with its own formatter
(milliseconds printed by a suite's helper, say). The page cannot sort or
filter (that would need JavaScript), and it has no run metadata of its own:
the reporter sees only tables, and suites put the environment in their notes.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stratabench.report.formats import REPORTERS
from stratabench.report.formats.base import Reporter
from stratabench.report.table import Column, Table
from stratabench.units import format_bytes, format_ns

__all__ = ["HtmlReporter"]

# Beyond two orders of magnitude the smallest bar of a linear scale is under
# 1% of the column, a pixel or nothing, which hides exactly the fast rows.
_LOG_ABOVE = 100.0

# Text longer than this (an error message, a finding) gets a minimum width, so
# a table too wide for the window does not squeeze it into a tall sliver.
_PROSE = 40

_FAILED_STATUS = re.compile(r"\bfailed\b", re.IGNORECASE)

_STYLE = """
html { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
body { color: #1d2329; background: #fff; margin: 0 auto; padding: 1.25rem 1.5rem 3rem; max-width: 100rem; }
header { border-bottom: 2px solid #1d2329; margin-bottom: 1.5rem; }
h1 { font-size: 1.8rem; margin: 0 0 .4rem; }
h2 { font-size: 1.2rem; margin: 2.2rem 0 .6rem; break-after: avoid; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: .25rem .45rem; border-bottom: 1px solid #dde1e5; vertical-align: top; }
th { text-align: left; font-weight: 600; border-bottom: 2px solid #9aa4ae; vertical-align: bottom; }
.right { text-align: right; }
td.right { white-space: nowrap; }
td.prose { min-width: 16rem; }
tbody tr:hover { background: #f4f6f8; }
td.chart { position: relative; min-width: 4.5rem; }
td.chart .bar { position: absolute; left: 0; top: .3rem; height: 1.25em; background: #c9dcf2; }
td.chart .value { position: relative; }
th .scale { font-weight: 400; font-size: .75rem; color: #5c6670; margin-left: .3rem; }
tr.failed td { background: #fdeaea; }
tr.failed td:first-child { box-shadow: inset 4px 0 0 #c62828; }
td.flag { color: #b71c1c; font-weight: 700; }
.legend { color: #5c6670; font-size: .9rem; margin: .4rem 0 0; }
ul.notes { margin: .5rem 0 0; padding-left: 1.2rem; color: #36404a; max-width: 75rem; }
ul.notes li { margin: .15rem 0; }
* { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
@page { size: landscape; margin: 1cm; }
@media print {
  html { font-size: 8.5pt; }
  body { padding: 0; max-width: none; }
  .scroll { overflow: visible; }
  tbody tr:hover { background: none; }
  tr { break-inside: avoid; }
}
"""


@dataclass(frozen=True)
class _Scale:
    """How one column's values become bar widths: its smallest and largest positive values."""

    smallest: float
    high: float
    log: bool

    def width(self, value: float) -> float:
        """The bar's width in percent of the cell; 0 draws no bar."""
        if value <= 0:
            return 0.0
        if not self.log:
            return 100 * value / self.high
        # The floor sits one decade below the smallest value, so its bar shows.
        floor = math.log10(self.smallest) - 1
        return 100 * (math.log10(value) - floor) / (math.log10(self.high) - floor)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _scale(table: Table, column: Column) -> _Scale | None:
    """The column's scale, or ``None`` when it is not charted."""
    if column.format not in (format_ns, format_bytes):
        return None
    numbers = [n for n in (_number(row.get(column.key)) for row in table.rows) if n is not None]
    positive = [n for n in numbers if n > 0]
    if len(numbers) < 2 or not positive:
        return None
    high, smallest = max(positive), min(positive)
    return _Scale(smallest, high, log=high / smallest > _LOG_ABOVE)


def _failing(key: str, value: Any) -> bool:
    """Whether this cell says its row failed or lost data."""
    if key == "integrity":
        return isinstance(value, str) and value == "FAIL"
    return key == "status" and isinstance(value, str) and _FAILED_STATUS.search(value) is not None


def _legend(table: Table, scales: dict[str, _Scale]) -> str:
    logs = [
        f"{column.header} ({column.format(scales[column.key].smallest)} to {column.format(scales[column.key].high)})"
        for column in table.columns if column.key in scales and scales[column.key].log
    ]
    text = "Bars compare the rows of each column: shorter is faster or smaller. Linear from zero"
    text += f", except a log scale in {'; '.join(logs)}." if logs else "."
    return f'<p class="legend">{html.escape(text)}</p>'


def _cell(column: Column, value: Any, text: str, scale: _Scale | None) -> tuple[str, bool]:
    """One ``<td>``, and whether it says the row failed."""
    failing = _failing(column.key, value)
    classes = [column.align] + (["flag"] if failing else []) + (["prose"] if len(text) > _PROSE else [])
    content = html.escape(text)
    if scale is not None:
        classes.append("chart")
        number = _number(value)
        width = 0.0 if number is None else scale.width(number)
        bar = f'<span class="bar" style="width:{width:.1f}%"></span>' if width > 0 else ""
        content = f'{bar}<span class="value">{content}</span>'
    return f'<td class="{" ".join(classes)}">{content}</td>', failing


def _table(table: Table) -> str:
    scales = {c.key: s for c in table.columns if (s := _scale(table, c)) is not None}
    head = []
    for column in table.columns:
        scale = scales.get(column.key)
        tag = '<span class="scale">log</span>' if scale is not None and scale.log else ""
        head.append(f'<th class="{column.align}">{html.escape(column.header)}{tag}</th>')
    body = []
    for row, texts in zip(table.rows, table.formatted()):
        cells = [_cell(c, row.get(c.key), text, scales.get(c.key)) for c, text in zip(table.columns, texts)]
        row_class = ' class="failed"' if any(failing for _, failing in cells) else ""
        body.append(f"<tr{row_class}>{''.join(td for td, _ in cells)}</tr>")
    parts = [
        "<section>",
        f"<h2>{html.escape(table.title)}</h2>",
        '<div class="scroll"><table>',
        f"<thead><tr>{''.join(head)}</tr></thead>",
        "<tbody>",
        *body,
        "</tbody></table></div>",
    ]
    if scales:
        parts.append(_legend(table, scales))
    if table.notes:
        parts.append('<ul class="notes">')
        parts += [f"<li>{html.escape(note)}</li>" for note in table.notes]
        parts.append("</ul>")
    parts.append("</section>")
    return "\n".join(parts)


@REPORTERS.register("html")
class HtmlReporter(Reporter):
    """One HTML page holding every table, bars in time and size columns, nothing external."""

    def render(self, tables: Sequence[Table]) -> str:
        return "\n".join([
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            "<title>stratabench report</title>",
            f"<style>{_STYLE}</style>",
            "</head>",
            "<body>",
            "<header><h1>stratabench report</h1></header>",
            "<main>",
            *(_table(table) for table in tables),
            "</main>",
            "</body>",
            "</html>",
        ]) + "\n"
