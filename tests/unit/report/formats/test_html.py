"""The HTML report: self-contained, escaped, bars only where times and sizes are."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from stratabench.report.formats import REPORTERS
from stratabench.report.generic import generic_tables
from stratabench.report.table import Column, Table
from stratabench.results.format import load
from stratabench.units import format_bytes, format_count, format_ns, format_ratio
from tests.golden_files import GOLDEN


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
        elif tag == "span" and found.get("class") == "bar" and self._cell is not None:
            width = re.fullmatch(r"width:([\d.]+)%", found.get("style") or "")
            assert width is not None, found
            self._cell[1] = float(width.group(1))

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
    assert "<h2>mixed &lt;b&gt;columns&lt;/b&gt;</h2>" in text
    assert "b &amp; c" in text
    assert "<li>a note with &lt;tags&gt; &amp; &quot;quotes&quot;</li>" in text
    first = _parse(text).rows[0][1][0]
    assert first[2] == "<script>alert(1)</script>"


def test_bars_only_in_time_and_size_columns() -> None:
    parsed = _parse(_render(_mixed_table()))
    assert parsed.heads == ["name", "N", "ns/op", "size", "vs json", "plain", "status"]
    widths = [[width for _, width, _ in cells] for _, cells in parsed.rows]
    # Linear from zero: the largest value fills its cell; None and 0 draw no bar.
    assert [row[2] for row in widths] == [100.0, 50.0, None]
    assert [row[3] for row in widths] == [100.0, 50.0, None]
    for index in (0, 1, 4, 5, 6):
        assert all(row[index] is None for row in widths), parsed.heads[index]
    assert all("chart" in parsed.rows[0][1][i][0] for i in (2, 3))
    assert "chart" not in parsed.rows[0][1][1][0]


def test_a_column_with_fewer_than_two_numbers_is_not_charted() -> None:
    table = Table("t", [Column("a", "a", "right", format_ns), Column("b", "b", "right", format_bytes)])
    # A bool is not a number, even though Python says it is an int; nor is NaN.
    table.rows = [{"a": 5.0, "b": True}, {"a": None, "b": 10}, {"a": float("nan"), "b": None}]
    text = _render(table)
    assert 'class="bar"' not in text and "Bars compare" not in text


def test_wide_ranges_use_a_log_scale_and_say_so() -> None:
    table = Table("t", [Column("name", "name"), Column("wall_ns", "ns/op", "right", format_ns),
                        Column("size_bytes", "size", "right", format_bytes)])
    table.rows = [{"name": "fast", "wall_ns": 0.7, "size_bytes": 100},
                  {"name": "mid", "wall_ns": 2.5e4, "size_bytes": 200},
                  {"name": "slow", "wall_ns": 2.5e9, "size_bytes": 150}]
    text = _render(table)
    parsed = _parse(text)
    assert parsed.heads[1] == "ns/oplog" and parsed.heads[2] == "size"
    fast, mid, slow = (cells[1][1] for _, cells in parsed.rows)
    assert fast is not None and mid is not None and slow == 100.0
    assert 0 < fast < mid < slow
    assert "log scale in ns/op (0.700 ns to 2.500 s)" in text
    assert [cells[2][1] for _, cells in parsed.rows] == [50.0, 100.0, 75.0]


def test_failed_and_corrupt_rows_are_marked() -> None:
    table = _mixed_table()
    table.columns = [*table.columns, Column("integrity", "integrity")]
    table.rows[0]["integrity"] = "FAIL"
    table.rows[2]["integrity"] = "ok"
    parsed = _parse(_render(table))
    assert [css for css, _ in parsed.rows] == ["failed", "failed", ""]
    flagged = [[cell[2] for cell in cells if "flag" in cell[0].split()] for _, cells in parsed.rows]
    assert flagged == [["FAIL"], ["failed: server went away"], []]
