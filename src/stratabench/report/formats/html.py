"""A self-contained HTML page: where it was measured, charts per suite, then the tables.

The page needs nothing but itself: the CSS is inline, the charts are inline
SVG drawn by matplotlib (:mod:`stratabench.report.charts`), there is no
JavaScript, and nothing is fetched (no fonts, scripts or images), so it
opens offline and prints. It opens with the environment and date from the
results header and a list of contents; each suite then shows its charts
(time against size with the Pareto frontier, growth where a size is swept,
time per cell with confidence intervals) and its tables. A long table is
folded into a ``<details>`` element the reader opens. Rows that failed or
lost data are marked in the tables as in the charts.

Rendered from bare tables (``render``, as ``compare`` does) the page has
no environment and no charts: only the tables and their contents.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

from stratabench.report.charts import Chart, machine_chart, suite_charts
from stratabench.report.provenance import probe_ratios, reference_ratios
from stratabench.report.document import Report
from stratabench.report.formats import REPORTERS
from stratabench.report.formats.base import Reporter
from stratabench.report.table import Column, Table, exported

__all__ = ["HtmlReporter"]

# Text longer than this (an error message, a finding) gets a minimum width, so
# a table too wide for the window does not squeeze it into a tall sliver.
_PROSE = 40

#: A table with more rows than this is folded: the page stays short, the rows one click away.
FOLD_ROWS = 12

_FAILED_STATUS = re.compile(r"\bfailed\b", re.IGNORECASE)

_STYLE = """
html { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
body { color: #1d2329; background: #fff; margin: 0 auto; padding: 1.25rem 1.5rem 3rem; max-width: 72rem; }
header { border-bottom: 2px solid #1d2329; margin-bottom: 1rem; padding-bottom: .5rem; }
h1 { font-size: 1.7rem; margin: 0 0 .4rem; }
h2 { font-size: 1.35rem; margin: 2rem 0 .5rem; padding-top: .5rem; border-top: 1px solid #dde1e5; }
h3 { font-size: 1.05rem; margin: 1.2rem 0 .4rem; break-after: avoid; }
dl.environment { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; margin: .4rem 0; }
dl.environment dt { font-weight: 600; color: #36404a; }
dl.environment dd { margin: 0; }
nav.contents { background: #f4f6f8; padding: .5rem 1rem; border-radius: 4px; }
nav.contents h2 { border: 0; margin: 0 0 .2rem; padding: 0; font-size: 1rem; }
nav.contents ol { margin: 0; padding-left: 1.3rem; columns: 2 22rem; }
nav.contents ol ol { columns: 1; font-size: .92rem; }
figure { margin: .8rem 0 1.2rem; max-width: 54rem; }
div.pair { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 32rem), 1fr)); gap: 0 1.5rem; }
div.pair figure { max-width: none; }
figure svg { width: 100%; height: auto; display: block; }
figcaption { color: #36404a; font-size: .9rem; margin-top: .2rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: .2rem .45rem; border-bottom: 1px solid #dde1e5; vertical-align: top; }
th { text-align: left; font-weight: 600; border-bottom: 2px solid #9aa4ae; vertical-align: bottom; }
.right { text-align: right; }
td.right { white-space: nowrap; }
td.prose { min-width: 16rem; }
tbody tr:hover { background: #f4f6f8; }
tr.failed td { background: #fdeaea; }
tr.failed td:first-child { box-shadow: inset 4px 0 0 #c62828; }
td.flag { color: #b71c1c; font-weight: 700; }
details > summary { cursor: pointer; color: #1f4f8a; margin: .3rem 0; }
ul.notes { margin: .5rem 0 0; padding-left: 1.2rem; color: #36404a; max-width: 60rem; }
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


def _slug(text: str, taken: set[str]) -> str:
    """An id for ``text``, unique among ``taken`` (which it joins)."""
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "part"
    slug, number = base, 2
    while slug in taken:
        slug, number = f"{base}-{number}", number + 1
    taken.add(slug)
    return slug


def _failing(key: str, value: Any) -> bool:
    """Whether this cell says its row failed or lost data."""
    if key == "integrity":
        return isinstance(value, str) and value == "FAIL"
    return key == "status" and isinstance(value, str) and _FAILED_STATUS.search(value) is not None


def _cell(column: Column, value: Any, text: str) -> tuple[str, bool]:
    """One ``<td>``, and whether it says the row failed."""
    failing = _failing(column.key, value)
    classes = [column.align] + (["flag"] if failing else []) + (["prose"] if len(text) > _PROSE else [])
    return f'<td class="{" ".join(classes)}">{html.escape(text)}</td>', failing


def _sort_key(value: Any) -> str:
    """A sortable table's cell value for the page's sorter: the raw number, else the text."""
    number = exported(value)
    return f' data-sort="{number!r}"' if isinstance(number, (int, float)) and not isinstance(number, bool) else ""


def _table(table: Table, anchor: str) -> str:
    head = "".join(f'<th class="{c.align}">{html.escape(c.header)}</th>' for c in table.columns)
    body = []
    for row, texts in zip(table.rows, table.formatted()):
        cells = [_cell(c, row.get(c.key), text) for c, text in zip(table.columns, texts)]
        if table.sortable:
            cells = [(td.replace("<td ", f"<td{_sort_key(row.get(c.key))} ", 1), failing)
                     for c, (td, failing) in zip(table.columns, cells)]
        row_class = ' class="failed"' if any(failing for _, failing in cells) else ""
        body.append(f"<tr{row_class}>{''.join(td for td, _ in cells)}</tr>")
    grid = "\n".join([
        '<div class="scroll"><table class="sortable">' if table.sortable else '<div class="scroll"><table>',
        f"<thead><tr>{head}</tr></thead>",
        "<tbody>",
        *body,
        "</tbody></table></div>",
    ])
    if len(table.rows) > FOLD_ROWS:
        grid = f"<details><summary>show all {len(table.rows)} rows</summary>\n{grid}\n</details>"
    parts = [f'<section class="table" id="{anchor}">', f"<h3>{html.escape(table.title)}</h3>", grid]
    if table.notes:
        parts.append('<ul class="notes">')
        parts += [f"<li>{html.escape(note)}</li>" for note in table.notes]
        parts.append("</ul>")
    parts.append("</section>")
    return "\n".join(parts)


def _figure(chart: Chart) -> str:
    marks = " ".join(f'data-{kind}="{count}"' for kind, count in sorted(chart.marks.items()))
    css = "chart" if chart.wide else "chart narrow"
    return "\n".join([
        f'<figure class="{css}" id="{chart.id}" {marks}>'.replace(" >", ">"),
        f"<h3>{html.escape(chart.title)}</h3>",
        chart.svg,
        f"<figcaption>{html.escape(chart.caption)}</figcaption>",
        "</figure>",
    ])


def _environment(facts: Sequence[tuple[str, str]]) -> str:
    if not facts:
        return ""
    rows = "".join(f"<dt>{html.escape(label)}</dt><dd>{html.escape(text)}</dd>" for label, text in facts)
    return f'<dl class="environment">{rows}</dl>'


def _contents(entries: Sequence[tuple[str, str, Sequence[tuple[str, str]]]]) -> str:
    """``<nav>`` listing each part (anchor, title) with its charts and tables beneath."""
    items = []
    for anchor, title, children in entries:
        inner = "".join(f'<li><a href="#{a}">{html.escape(t)}</a></li>' for a, t in children)
        items.append(f'<li><a href="#{anchor}">{html.escape(title)}</a>' + (f"<ol>{inner}</ol>" if inner else "")
                     + "</li>")
    return f'<nav class="contents"><h2>Contents</h2><ol>{"".join(items)}</ol></nav>'


def _paired(pieces: Sequence[str]) -> list[str]:
    """The pieces, with each run of narrow figures in one grid, side by side."""
    out: list[str] = []
    run: list[str] = []
    for piece in [*pieces, ""]:
        if piece.startswith('<figure class="chart narrow"'):
            run.append(piece)
            continue
        if run:
            out.append('<div class="pair">\n' + "\n".join(run) + "\n</div>")
            run = []
        if piece:
            out.append(piece)
    return out


#: Sorts a ``table.sortable`` by the clicked column (again: the other way), by each cell's raw
#: ``data-sort`` number, else its text; cells without a value go last. Inline: the page needs nothing else.
_SORTER = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.style.cursor = "pointer";
    th.title = "sort by this column";
    th.addEventListener("click", function () {
      var down = th.dataset.order !== "up";
      table.querySelectorAll("th").forEach(function (other) { delete other.dataset.order; });
      th.dataset.order = down ? "up" : "down";
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[column];
        if (cell.dataset.sort !== undefined) { return parseFloat(cell.dataset.sort); }
        var text = cell.textContent.trim();
        return text === "" || text === "-" ? null : text;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === null || y === null) { return x === y ? 0 : x === null ? 1 : -1; }
        var order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
        return down ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def _page(facts: Sequence[tuple[str, str]], parts: Sequence[tuple[str, str, list[tuple[str, str, str]]]]) -> str:
    """The page from the environment and parts: (anchor, heading, [(anchor, title, html)])."""
    body = []
    for anchor, heading, pieces in parts:
        body.append(f'<section class="suite" id="{anchor}">')
        if heading:
            body.append(f"<h2>{html.escape(heading)}</h2>")
        body += _paired([piece for _, _, piece in pieces])
        body.append("</section>")
    contents = [(anchor, heading, [(a, t) for a, t, _ in pieces]) for anchor, heading, pieces in parts]
    if len(parts) == 1 and not parts[0][1]:
        contents = [(a, t, []) for a, t, _ in parts[0][2]]
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
        "<header><h1>stratabench report</h1>",
        _environment(facts),
        "</header>",
        _contents(contents),
        "<main>",
        *body,
        "</main>",
        *([f"<script>{_SORTER}</script>"] if any('<table class="sortable">' in piece for piece in body) else []),
        "</body>",
        "</html>",
    ]) + "\n"


@REPORTERS.register("html")
class HtmlReporter(Reporter):
    """One HTML page: environment, contents, charts and tables per suite, nothing external."""

    def render(self, tables: Sequence[Table]) -> str:
        taken: set[str] = set()
        pieces = [(anchor, table.title, _table(table, anchor))
                  for table in tables for anchor in [_slug(table.title, taken)]]
        return _page([], [("tables", "", pieces)])

    def render_report(self, report: Report) -> str:
        taken: set[str] = set()
        parts = []
        env = report.header.get("environment") or {}
        machine = machine_chart(reference_ratios(env), probe_ratios(env, report.results))
        if machine is not None:
            taken.add(machine.id)
            parts.append(("machine", "machine", [(machine.id, machine.title, _figure(machine))]))
        for section in report.sections:
            anchor = _slug(f"suite {section.suite}", taken)
            pieces = []
            # The answer first, as in every format; then the charts; then as much detail as asked for.
            answer = [section.answer.table()] if section.answer is not None else []
            for table in answer:
                table_anchor = _slug(table.title, taken)
                pieces.append((table_anchor, table.title, _table(table, table_anchor)))
            for chart in suite_charts(section.suite, report.results_of(section), section.charts):
                taken.add(chart.id)
                pieces.append((chart.id, chart.title, _figure(chart)))
            detail = [] if report.detail == "summary" else section.tables
            for table in detail + (section.cells if report.detail == "full" else []):
                table_anchor = _slug(table.title, taken)
                pieces.append((table_anchor, table.title, _table(table, table_anchor)))
            parts.append((anchor, section.suite, pieces))
        return _page(report.provenance, parts)
