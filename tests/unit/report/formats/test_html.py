"""The HTML report: self-contained, escaped, failures marked, long tables folded, a page per run."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from stratabench.report.formats import REPORTERS
from stratabench.report.formats.html import FOLD_ROWS
from stratabench.report.generic import generic_tables
from stratabench.report.table import Column, Table
from stratabench.results.format import load
from stratabench.units import format_bytes, format_count, format_ns, format_ratio
from stratabench.suites.kit.reports import run_report
from tests.golden_files import GOLDEN, assert_golden


class _Cells(HTMLParser):
    """Each body row as a list of cells: (class attribute, bar width or None, text)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, list[tuple[str, float | None, str]]]] = []
        self.heads: list[str] = []
        self._cell: list[object] | None = None
        self._in_head = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "thead":
            self._in_head = True
        elif tag == "tr" and not self._in_head:
            self.rows.append((found.get("class") or "", []))
        elif tag == "th":
            self.heads.append("")
        elif tag == "td":
            self._cell = [found.get("class") or "", None, ""]

    def handle_endtag(self, tag: str) -> None:
        if tag == "thead":
            self._in_head = False
        elif tag == "td" and self._cell is not None:
            css, width, text = self._cell
            self.rows[-1][1].append((str(css), width if isinstance(width, float) else None, str(text)))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell[2] = str(self._cell[2]) + data
        elif self._in_head and self.heads:
            self.heads[-1] += data


def _parse(text: str) -> _Cells:
    parser = _Cells()
    parser.feed(text)
    return parser


def _render(*tables: Table) -> str:
    return str(REPORTERS.get("html")().render(list(tables)))


def _mixed_table() -> Table:
    table = Table(
        "mixed <b>columns</b>",
        [Column("name", "name"), Column("loops", "N", "right", format_count),
         Column("wall_ns", "ns/op", "right", format_ns), Column("size_bytes", "size", "right", format_bytes),
         Column("ratio", "vs json", "right", format_ratio), Column("plain", "plain", "right"),
         Column("status", "status")],
    )
    table.rows = [
        {"name": "<script>alert(1)</script>", "loops": 100, "wall_ns": 200.0, "size_bytes": 1000,
         "ratio": 2.0, "plain": 7, "status": "ok"},
        {"name": "b & c", "loops": 3000, "wall_ns": 100.0, "size_bytes": 500, "ratio": 1.0, "plain": 9,
         "status": "failed: server went away"},
        {"name": "c", "loops": 5, "wall_ns": None, "size_bytes": 0, "ratio": None, "plain": None, "status": "ok"},
    ]
    table.notes = ['a note with <tags> & "quotes"']
    return table


def test_page_is_self_contained() -> None:
    results = load(GOLDEN / "results" / "v1.jsonl")
    text = _render(_mixed_table(), *generic_tables(results.cells))
    assert text.startswith("<!DOCTYPE html>") and text.endswith("</html>\n")
    assert "<title>stratabench report</title>" in text
    for external in ("http://", "https://", "url(", "@import", "<script", "<link", "<img"):
        assert external not in text.lower(), external
    assert not re.search(r"""(src|href)\s*=\s*["']?//""", text, re.IGNORECASE)


def test_everything_from_the_tables_is_escaped() -> None:
    text = _render(_mixed_table())
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<h3>mixed &lt;b&gt;columns&lt;/b&gt;</h3>" in text
    assert "b &amp; c" in text
    assert "<li>a note with &lt;tags&gt; &amp; &quot;quotes&quot;</li>" in text
    first = _parse(text).rows[0][1][0]
    assert first[2] == "<script>alert(1)</script>"


def test_failed_and_corrupt_rows_are_marked() -> None:
    table = _mixed_table()
    table.columns = [*table.columns, Column("integrity", "integrity")]
    table.rows[0]["integrity"] = "FAIL"
    table.rows[2]["integrity"] = "ok"
    parsed = _parse(_render(table))
    assert [css for css, _ in parsed.rows] == ["failed", "failed", ""]
    flagged = [[cell[2] for cell in cells if "flag" in cell[0].split()] for _, cells in parsed.rows]
    assert flagged == [["FAIL"], ["failed: server went away"], []]


def test_a_long_table_is_folded_and_a_short_one_is_not() -> None:
    short = Table("short", [Column("n", "n")], [{"n": n} for n in range(FOLD_ROWS)])
    long = Table("long", [Column("n", "n")], [{"n": n} for n in range(FOLD_ROWS + 1)])
    text = _render(short, long)
    short_part, long_part = text.split('<section class="table" id="long">')
    assert "<details>" not in short_part
    assert f"<details><summary>show all {FOLD_ROWS + 1} rows</summary>" in long_part
    assert len(_parse(text).rows) == 2 * FOLD_ROWS + 1  # folded rows are still in the page


class _Page(HTMLParser):
    """Ids, contents links, figures (id → data attributes) and environment labels of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.links: list[str] = []
        self.figures: dict[str, dict[str, str]] = {}
        self.facts: list[str] = []
        self._in_nav = self._in_dt = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {key: value or "" for key, value in attrs}
        if "id" in found:
            self.ids.append(found["id"])
        if tag == "nav":
            self._in_nav = True
        elif tag == "a" and self._in_nav:
            self.links.append(found["href"])
        elif tag == "figure":
            self.figures[found["id"]] = {k[5:]: v for k, v in found.items() if k.startswith("data-")}
        self._in_dt = tag == "dt"

    def handle_endtag(self, tag: str) -> None:
        if tag == "nav":
            self._in_nav = False

    def handle_data(self, data: str) -> None:
        if self._in_dt:
            self.facts.append(data)
            self._in_dt = False


def _golden_page() -> str:
    results = load(GOLDEN / "results" / "v1.jsonl")
    return str(REPORTERS.get("html")().render_report(run_report(results.cells, results.header)))


def test_a_run_page_has_its_environment_contents_and_charts() -> None:
    text = _golden_page()
    page = _Page()
    page.feed(text)
    assert page.facts[:3] == ["date", "machine", "software"]
    assert "Example CPU, 2 cores, Linux 6" in text and "2026-11-21 06:00:00+00:00" in text
    assert page.links and all(link.startswith("#") and link[1:] in page.ids for link in page.links)
    assert len(page.ids) == len(set(page.ids)), "ids are unique across the page and its charts"
    # Two bulkload cells, neither with a size and one failed: no trade-off to draw, one time chart.
    assert page.figures == {"bulkload-time-per-operation": {"bar": "2", "whisker": "2", "failed": "1"}}
    for kind, count in (("bar", 2), ("whisker", 2), ("failed", 1)):
        assert len(re.findall(rf'<g id="bulkload-time-per-operation-mark-{kind}-\d+"', text)) == count
    for external in ("http://www.w3.org/1999/xlink", "http://www.w3.org/2000/svg"):
        text = text.replace(external, "")  # SVG's namespace names, never fetched
    for external in ("http://", "https://", "url(http", "@import", "<script src", "<link", "<img"):
        assert external not in text.lower(), external
    # The one script is the sorter of the bulkload table, inline.
    assert text.count("<script>") == 1 and '<table class="sortable">' in text


def test_the_run_page_matches_its_golden_file() -> None:
    assert_golden("report/v1.html.txt", _golden_page())
