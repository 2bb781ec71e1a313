"""Charts of one suite's cells, drawn by matplotlib as inline SVG.

Three kinds, each drawn only where the results hold what it needs:

- **time vs size**: one point per cell measuring both ``wall_ns`` and
  ``size_bytes``; the Pareto frontier (no other cell is both faster and
  smaller) is joined by a line and named;
- **time per cell**: horizontal bars of the median ``wall_ns`` with the
  confidence interval of the median as whiskers, every bar linear from
  zero; when the medians span more than :data:`BAND_RATIO` the rows are cut
  into bands of similar magnitude, each on its own linear axis, and the
  chart says the axis is broken;
- **growth**: ``wall_ns`` against the parameter a suite sweeps (the record
  count by default), one line per cell, where a cell was measured at two
  values or more;
- **curves** (:func:`curve_chart`): lines of (x, y) points a study computes
  itself, each with one point marked and a limit drawn across (a load
  sweep's throughput against p99 latency, with its knee); a study draws
  them through :attr:`ChartPlan.curves`.

Failed cells are drawn in red and marked "failed"; cells that could not run
here are left out and counted in the caption. Every mark a reader counts
(a bar, a whisker, a point, a failure marker) is its own SVG group with an
id ``CHART-mark-KIND-N``, so a test can count them in a browser.

The SVG is deterministic: no date in its metadata, clip-path ids salted
with the chart's id, text kept as text (``svg.fonttype = 'none'``), so a
golden file of a page stays stable. Every id in a chart is prefixed with the
chart's id, so several charts can share one page. matplotlib is imported
only when a chart is drawn, so the other report formats never load it.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stratabench.results.records import CellResult
from stratabench.units import format_bytes, format_ns

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

__all__ = ["BAND_RATIO", "Chart", "ChartPlan", "Curve", "CurveAxes", "bands", "curve_chart", "machine_chart", "pareto_frontier",
           "suite_charts"]

#: Within one linear band the largest median is at most this many times the
#: smallest, so the shortest bar stays at least 1/30 of its axis: visible.
BAND_RATIO = 30.0

_OK = "#4a78b5"
_FAILED = "#c62828"
_FRONTIER = "#d9730d"
_WHISKER = "#1d2329"
_WIDTH_IN = 7.5
_HALF_WIDTH_IN = 5.6  # two side by side on the page
_ROW_IN = 0.165

_RC: dict[RcKeyType, Any] = {
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica", "Liberation Sans"],
    "font.size": 8.5,
    "axes.titlesize": 9.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#e3e7eb",
    "grid.linewidth": 0.6,
    "axes.axisbelow": True,
}


@dataclass(frozen=True)
class ChartPlan:
    """How a study wants its cells charted; the defaults suit most suites.

    Attributes
    ----------
    sweep
        The parameter a growth plot puts on its x axis (a record count, a
        number of properties). Cells whose other parameters agree form one line.
    ignore
        Parameters that change with ``sweep`` and so do not tell lines apart
        (a record count derived from the size, say).
    group
        One time chart per value of this parameter (an operation, a cell
        family), so a suite of many cells gets several short charts.
    curves
        The study's own charts of its cells (drawn with :func:`curve_chart`),
        shown first; ``None`` for none.
    growth_by_group
        One growth plot per value of ``group`` too, instead of one for the
        suite: a study that sweeps many cells keeps each plot's lines few.
    compared
        The cells the time-against-size chart may put on its frontier; the
        study leaves out rows that do less work than the others (a lazy
        parse, a resident load) so that none comes first for doing nothing.
        ``None``: every cell.
    """

    sweep: str = "size"
    ignore: tuple[str, ...] = ()
    group: str | None = None
    curves: Callable[[Sequence[CellResult]], list[Chart]] | None = None
    growth_by_group: bool = False
    compared: Callable[[Sequence[CellResult]], Sequence[CellResult]] | None = None


@dataclass(frozen=True)
class Chart:
    """One drawn chart.

    Attributes
    ----------
    id
        Unique in a page; every id inside ``svg`` starts with it.
    title, caption
        Above and below the chart, in the page's text.
    svg
        An ``<svg>`` element, ready to inline.
    marks
        Kind → how many countable marks the SVG holds (``bar``, ``whisker``,
        ``point``, ``frontier``, ``failed``, ``line``).
    wide
        Drawn for the page's width; ``False``: for half of it, beside its neighbour
        (the time charts of a suite's groups).
    """

    id: str
    title: str
    caption: str
    svg: str
    marks: dict[str, int] = field(default_factory=dict)
    wide: bool = True


def pareto_frontier(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indexes of the points no other point beats on both coordinates (smaller is better), by x."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], points[i][1]))
    frontier: list[int] = []
    best_y = math.inf
    for index in order:
        if points[index][1] < best_y:
            frontier.append(index)
            best_y = points[index][1]
    return frontier


def bands(values: Sequence[float], ratio: float = BAND_RATIO) -> list[list[int]]:
    """Indexes of ``values`` (ascending), cut where a value exceeds its band's smallest ``ratio``-fold."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    cut: list[list[int]] = []
    for index in order:
        if not cut or values[index] > values[cut[-1][0]] * ratio:
            cut.append([])
        cut[-1].append(index)
    return cut


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "chart"


def _measured(results: Sequence[CellResult], *metrics: str) -> list[CellResult]:
    return [r for r in results if r.status in ("ok", "failed") and all(r.median(m) is not None for m in metrics)]


def _left_out(results: Sequence[CellResult], shown: int) -> str:
    missing = len(results) - shown
    return f" {missing} cell{'s' if missing != 1 else ''} without these measurements left out." if missing else ""


class _Marks:
    """Gives each countable artist its id and counts them by kind."""

    def __init__(self, chart_id: str) -> None:
        self.chart_id = chart_id
        self.counts: dict[str, int] = {}

    def tag(self, artist: Any, kind: str) -> None:
        number = self.counts.get(kind, 0)
        artist.set_gid(f"{self.chart_id}-mark-{kind}-{number}")
        self.counts[kind] = number + 1


def _tick_formatter(format_value: Callable[[float | None], str]) -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _position: "0" if value == 0 else format_value(value))


def _scale(ax: Axes, axis: str, values: Sequence[float], format_value: Callable[[float | None], str]) -> bool:
    """Log scale when the values span more than two decades; returns whether it is log."""
    positive = [v for v in values if v > 0]
    log = bool(positive) and max(positive) / min(positive) > 100
    target = ax.xaxis if axis == "x" else ax.yaxis
    if log:
        (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    else:
        (ax.set_xlim if axis == "x" else ax.set_ylim)(0, max(values) * 1.08 if values else 1)
    target.set_major_formatter(_tick_formatter(format_value))
    target.set_minor_formatter(_tick_formatter(lambda _value: ""))
    return log


def _svg(figure: Figure, chart_id: str) -> str:
    """The figure as an ``<svg>`` element whose ids all start with ``chart_id``."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": chart_id}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, flags=re.DOTALL)
    prefix = f"{chart_id}-"

    def own(name: str) -> str:
        return name if name.startswith(prefix) else prefix + name

    text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{own(m.group(1))}"', text)
    text = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{own(m.group(1))})", text)
    text = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{own(m.group(1))}"', text)
    # Scales with the page: the viewBox keeps the proportions, CSS sets the width.
    text = re.sub(r'^<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1 role="img"', text, count=1)
    return text.strip()


def _figure(height_in: float, width_in: float = _WIDTH_IN) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width_in, height_in), layout="constrained")


def _groups(results: Sequence[CellResult], group: str | None) -> list[tuple[str, list[CellResult]]]:
    """(value, cells) for each value of the ``group`` parameter, in run order; one unnamed group without."""
    if group is None:
        return [("", list(results))]
    # A cell without the parameter (a results file older than the study's grouping) is in the unnamed group.
    values = dict.fromkeys(str(r.params.get(group, "")) for r in results)
    return [(value, [r for r in results if str(r.params.get(group, "")) == value]) for value in values]


def _tradeoff_panel(ax: Axes, cells: Sequence[CellResult], marks: _Marks) -> list[CellResult]:
    """One panel of time against size; returns its frontier."""
    points = [(float(c.median("wall_ns") or 0), float(c.median("size_bytes") or 0)) for c in cells]
    ok = [i for i, c in enumerate(cells) if c.ok]
    frontier = [ok[i] for i in pareto_frontier([points[i] for i in ok])]
    for index, (cell, (x, y)) in enumerate(zip(cells, points)):
        color = _FRONTIER if index in frontier else _OK if cell.ok else _FAILED
        (point,) = ax.plot([x], [y], linestyle="none", marker="o" if cell.ok else "X", color=color,
                           markersize=5 if cell.ok else 7)
        marks.tag(point, "point")
        if not cell.ok:
            label = ax.annotate(f"{cell.cell} (failed)", (x, y), xytext=(5, -9), textcoords="offset points",
                                color=_FAILED, fontsize=7)
            marks.tag(label, "failed")
    if frontier:
        ax.plot([points[i][0] for i in frontier], [points[i][1] for i in frontier],
                color=_FRONTIER, linewidth=1.2, drawstyle="steps-post", zorder=1)
        # Numbers, not names, beside the points: names collide; the caption names each number.
        for rank, index in enumerate(frontier, 1):
            label = ax.annotate(str(rank), points[index], xytext=(3, 3), textcoords="offset points",
                                color="#7a3e00", fontsize=7.5, fontweight="bold")
            marks.tag(label, "frontier")
    x_log = _scale(ax, "x", [p[0] for p in points], format_ns)
    y_log = _scale(ax, "y", [p[1] for p in points], format_bytes)
    ax.set_xlabel("median time per operation" + (" (log scale)" if x_log else ""))
    ax.set_ylabel("size" + (" (log scale)" if y_log else ""))
    return [cells[i] for i in frontier]


def _tradeoff_chart(suite: str, results: Sequence[CellResult], group: str | None, suffix: str,
                    note: str = "") -> Chart | None:
    panels = [(value, cells) for value, members in _groups(results, group)
              if len(cells := _measured(members, "wall_ns", "size_bytes")) >= 2]
    if not panels:
        return None
    chart_id = f"{_slug(suite)}-tradeoff"
    marks = _Marks(chart_id)
    columns = 1 if len(panels) == 1 else 2
    rows = -(-len(panels) // columns)
    figure = _figure(0.4 + (3.2 if columns == 1 else 2.6) * rows)
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    fronts = []
    for ax, (value, cells) in zip(axes, panels):
        frontier = _tradeoff_panel(ax, cells, marks)
        if value:
            ax.set_title(f"{group} {value}", loc="left", fontweight="bold")
        fronts.append((value, frontier))
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    figure.suptitle("lower left is better; orange: the Pareto frontier (nothing else is both faster and smaller)",
                    x=0.01, ha="left", fontsize=8.5, color="#36404a")
    shown = sum(len(cells) for _, cells in panels)
    caption = f"{shown} cells; on the frontier, fastest first: " + "; ".join(
        (f"{value}: " if value else "") + ", ".join(f"{rank} {cell.cell}" for rank, cell in enumerate(frontier, 1))
        for value, frontier in fronts)
    caption += "." + _left_out(results, shown) + note
    return Chart(chart_id, f"{suite}: time against size{suffix}", caption, _svg(figure, chart_id), marks.counts)


def _names(cells: Sequence[CellResult], sweep: str) -> list[str]:
    """Each cell's name, with the swept value added where one name was measured at several."""
    counts: dict[str, int] = {}
    for cell in cells:
        counts[cell.cell] = counts.get(cell.cell, 0) + 1
    return [f"{c.cell} ({sweep} {c.params.get(sweep)})" if counts[c.cell] > 1 else c.cell for c in cells]


def _time_chart(suite: str, results: Sequence[CellResult], plan: ChartPlan, group: str,
                suffix: str) -> Chart | None:
    measured = _measured(results, "wall_ns")
    unmeasured_failures = [r for r in results if r.status == "failed" and r.median("wall_ns") is None]
    if not measured:
        return None
    title = f"{suite}{' ' + group if group else ''}: time per operation"
    chart_id = _slug(title)
    title += suffix
    from matplotlib.ticker import MaxNLocator

    marks = _Marks(chart_id)
    medians = [float(c.median("wall_ns") or 0) for c in measured]
    cut = bands(medians)
    rows = len(measured) + len(unmeasured_failures)
    heights = [len(band) for band in cut]
    if unmeasured_failures:
        heights[-1] += len(unmeasured_failures)
    figure = _figure(0.45 + 0.5 * len(cut) + _ROW_IN * rows, _WIDTH_IN if not group else _HALF_WIDTH_IN)
    axes = figure.subplots(len(cut), 1, squeeze=False, gridspec_kw={"height_ratios": heights})[:, 0]
    for number, (ax, band) in enumerate(zip(axes, cut)):
        cells = [measured[i] for i in band]
        if number == len(cut) - 1:
            cells_failed: list[CellResult] = unmeasured_failures
        else:
            cells_failed = []
        names = _names([*cells, *cells_failed], plan.sweep)
        labels = [name + ("  (failed)" if not c.ok else "") for name, c in zip(names, cells)] + [
            f"{name}  (failed, not measured)" for name in names[len(cells):]]
        positions = list(range(len(labels)))
        high = 0.0
        for y, cell in zip(positions, cells):
            summary = cell.summary("wall_ns")
            assert summary is not None
            color = _OK if cell.ok else _FAILED
            (bar,) = ax.barh([y], [summary.median], height=0.62, color=color,
                             hatch="////" if not cell.ok else None, edgecolor="white" if cell.ok else "#7f0000",
                             linewidth=0)
            marks.tag(bar, "bar")
            (whisker,) = ax.plot([summary.ci_low, summary.ci_high], [y, y], color=_WHISKER, linewidth=1,
                                 marker="|", markersize=5)
            marks.tag(whisker, "whisker")
            high = max(high, summary.ci_high, summary.median)
            if not cell.ok:
                marks.tag(ax.text(summary.ci_high, y, "  failed", va="center", color=_FAILED, fontsize=7.5,
                                  fontweight="bold"), "failed")
        for y, _cell in zip(positions[len(cells):], cells_failed):
            marks.tag(ax.text(0, y, " ✗ failed: nothing measured", va="center", color=_FAILED, fontsize=7.5,
                              fontweight="bold"), "failed")
        ax.set_yticks(positions, labels)
        for tick, cell in zip(ax.get_yticklabels(), [*cells, *cells_failed]):
            if not cell.ok:
                tick.set_color(_FAILED)
        ax.set_ylim(len(labels) - 0.5, -0.5)
        ax.set_xlim(0, (high or 1) * 1.12)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6 if not group else 4))  # labels that never touch
        ax.xaxis.set_major_formatter(_tick_formatter(format_ns))
        ax.grid(axis="y", visible=False)
        ax.tick_params(axis="y", length=0)
        if len(cut) > 1:
            low, high_median = format_ns(medians[band[0]]), format_ns(medians[band[-1]])
            extent = low if low == high_median else f"{low} to {high_median}"
            ax.set_title(f"band {number + 1} of {len(cut)}: {extent}, linear from zero", loc="left", color="#36404a")
    axes[-1].set_xlabel("median time per operation; whiskers: its confidence interval")
    if len(cut) > 1:
        span = max(medians) / min(medians)
        figure.suptitle(f"Axis broken: medians span {span:,.0f}×, so each band has its own linear scale",
                        x=0.01, ha="left", fontsize=9, color=_FAILED, fontweight="bold")
    levels = sorted({round(100 * s.ci_level) for c in measured if (s := c.summary("wall_ns")) is not None})
    caption = (f"{len(measured)} cells, fastest first; bars are medians, whiskers the "
               f"{'/'.join(f'{level}%' for level in levels)} confidence interval of the median.")
    if len(cut) > 1:
        caption += f" The axis is broken into {len(cut)} bands of similar magnitude, each linear from zero."
    failed = sum(1 for c in measured if not c.ok) + len(unmeasured_failures)
    if failed:
        caption += f" {failed} failed, in red."
    caption += _left_out(results, len(measured) + len(unmeasured_failures))
    return Chart(chart_id, title, caption, _svg(figure, chart_id), marks.counts, wide=not group)


def _series_label(params: dict[str, Any], varying: Sequence[str]) -> str:
    words = dict.fromkeys(str(params[key]) for key in varying if key in params)  # "memory memory" once
    return " ".join(words) or "all"


def _sweeps(results: Sequence[CellResult], plan: ChartPlan) -> list[list[CellResult]]:
    """Each cell measured at several values of the swept parameter: its results, by that value."""
    skip = {plan.sweep, *plan.ignore}

    def swept(cell: CellResult) -> bool:
        value = cell.params.get(plan.sweep)
        return isinstance(value, int | float) and not isinstance(value, bool)

    def identity(cell: CellResult) -> tuple[tuple[str, str], ...]:
        return tuple(sorted((key, repr(value)) for key, value in cell.params.items() if key not in skip))

    series: dict[tuple[tuple[str, str], ...], list[CellResult]] = {}
    for cell in filter(swept, results):
        series.setdefault(identity(cell), []).append(cell)
    return [sorted(members, key=lambda c: float(c.params[plan.sweep]))
            for members in series.values() if len({c.params[plan.sweep] for c in members}) >= 2]


def _largest_only(results: Sequence[CellResult], plan: ChartPlan) -> tuple[list[CellResult], bool]:
    """The results with each swept cell at its largest value only, and whether any was swept."""
    smaller = {id(cell) for line in _sweeps(results, plan) for cell in line[:-1]}
    return [cell for cell in results if id(cell) not in smaller], bool(smaller)


def _growth_chart(suite: str, results: Sequence[CellResult], plan: ChartPlan, group: str = "") -> Chart | None:
    lines = _sweeps(_measured(results, "wall_ns"), plan)
    if not lines:
        return None
    named = f"{suite} {group}" if group else suite
    skip = {plan.sweep, *plan.ignore}
    keys = sorted({key for members in lines for c in members for key in c.params if key not in skip})
    varying = [key for key in keys if len({repr(c.params.get(key)) for m in lines for c in m}) > 1]
    chart_id = f"{_slug(named)}-growth"
    marks = _Marks(chart_id)
    figure = _figure(3.4 + (0.13 * -(-len(lines) // 3) if len(lines) > 12 else 0))
    ax = figure.add_subplot()
    colors = [f"C{i % 10}" for i in range(len(lines))]
    styles = ("-", "--", ":")  # beyond ten lines the colours repeat, the dashes tell them apart
    sweeps: list[float] = []
    times: list[float] = []
    for index, (color, members) in enumerate(zip(colors, lines)):
        xs = [float(c.params[plan.sweep]) for c in members]
        ys = [float(c.median("wall_ns") or 0) for c in members]
        sweeps += xs
        times += ys
        (line,) = ax.plot(xs, ys, color=color, linewidth=1.2, linestyle=styles[index // 10 % len(styles)],
                          label=_series_label(dict(members[0].params), varying))
        marks.tag(line, "line")
        for x, y, cell in zip(xs, ys, members):
            (point,) = ax.plot([x], [y], linestyle="none", marker="o" if cell.ok else "X",
                               color=color if cell.ok else _FAILED, markersize=4 if cell.ok else 7)
            marks.tag(point, "point")
            if not cell.ok:
                marks.tag(ax.annotate("failed", (x, y), xytext=(4, 4), textcoords="offset points",
                                      color=_FAILED, fontsize=7.5), "failed")
    x_log = _scale(ax, "x", sweeps, lambda v: f"{v:,.0f}" if v is not None else "-")
    y_log = _scale(ax, "y", times, format_ns)
    ax.set_xlabel(plan.sweep + (" (log scale)" if x_log else ""))
    ax.set_ylabel("median time per operation" + (" (log scale)" if y_log else ""))
    if len(lines) <= 12:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    else:  # many lines: the legend below, in columns, so the plot keeps its width
        figure.legend(fontsize=6.5, loc="outside lower center", ncol=3, frameon=False)
    points = sum(len(m) for m in lines)
    caption = (f"{len(lines)} cell{'s' if len(lines) != 1 else ''} measured at several values of "
               f"{plan.sweep}, {points} points.")
    return Chart(chart_id, f"{named}: growth with {plan.sweep}", caption, _svg(figure, chart_id), marks.counts)


@dataclass(frozen=True)
class Curve:
    """One line of a :func:`curve_chart`.

    Attributes
    ----------
    label
        Names the line in the legend.
    points
        (x, y) in the order they are joined.
    marked
        Index of the point to mark (a knee); ``None`` for none.
    past_limit
        Indexes of points drawn as past the limit (red crosses).
    """

    label: str
    points: tuple[tuple[float, float], ...]
    marked: int | None = None
    past_limit: tuple[int, ...] = ()


@dataclass(frozen=True)
class CurveAxes:
    """What a :func:`curve_chart`'s axes show: labels and how to write their values."""

    x_label: str
    y_label: str
    x_format: Callable[[float | None], str]
    y_format: Callable[[float | None], str]


def curve_chart(chart_id: str, title: str, caption: str, curves: Sequence[Curve], axes: CurveAxes, *,
                mark_label: str, limit: float | None = None, limit_label: str = "limit") -> Chart:
    """Lines of points, each with its marked point named ``mark_label``, and an optional horizontal limit.

    Marks counted: ``line``, ``point``, ``past`` (points past the limit) and
    ``marked``. Call it inside :func:`suite_charts` (through
    :attr:`ChartPlan.curves`), which sets the project's chart style.
    """
    marks = _Marks(chart_id)
    figure = _figure(3.4)
    ax = figure.add_subplot()
    xs_all: list[float] = []
    ys_all: list[float] = []
    for number, curve in enumerate(curves):
        color = f"C{number % 10}"
        xs = [x for x, _ in curve.points]
        ys = [y for _, y in curve.points]
        xs_all += xs
        ys_all += ys
        (line,) = ax.plot(xs, ys, color=color, linewidth=1.2, label=curve.label)
        marks.tag(line, "line")
        for index, (x, y) in enumerate(curve.points):
            past = index in curve.past_limit
            (point,) = ax.plot([x], [y], linestyle="none", marker="X" if past else "o",
                               color=_FAILED if past else color, markersize=7 if past else 4)
            marks.tag(point, "past" if past else "point")
        if curve.marked is not None:
            x, y = curve.points[curve.marked]
            (star,) = ax.plot([x], [y], linestyle="none", marker="*", markersize=14, color=_FRONTIER,
                              markeredgecolor="#7a3e00", zorder=5)
            marks.tag(star, "marked")
            marks.tag(ax.annotate(mark_label, (x, y), xytext=(-8, 9), textcoords="offset points",
                                  color="#7a3e00", fontsize=8, fontweight="bold"), "label")
    if limit is not None:
        ax.axhline(limit, color=_FAILED, linewidth=0.9, linestyle="--")
        ax.annotate(limit_label, (0, limit), xycoords=("axes fraction", "data"), xytext=(3, 3),
                    textcoords="offset points", color=_FAILED, fontsize=7.5)
        ys_all.append(limit)
    x_log = _scale(ax, "x", xs_all, axes.x_format)
    y_log = _scale(ax, "y", ys_all, axes.y_format)
    ax.set_xlabel(axes.x_label + (" (log scale)" if x_log else ""))
    ax.set_ylabel(axes.y_label + (" (log scale)" if y_log else ""))
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return Chart(chart_id, title, caption, _svg(figure, chart_id), marks.counts)


def suite_charts(suite: str, results: Sequence[CellResult], plan: ChartPlan | None = None) -> list[Chart]:
    """The charts of one suite's cells, in reading order: the study's curves, trade-off, growth, time per cell."""
    import matplotlib

    plan = plan or ChartPlan()
    # Comparing cells means comparing them at one value of the sweep: the largest, the study's
    # case; the growth chart shows the others.
    largest, swept = _largest_only(results, plan)
    suffix = f" (largest {plan.sweep} of each cell)" if swept else ""
    charts: list[Chart | None] = []
    with matplotlib.rc_context(_RC):
        if plan.curves is not None:
            charts += plan.curves(results)
        compared = largest if plan.compared is None else list(plan.compared(largest))
        left_out = len(largest) - len(compared)
        suffix_note = (f" {left_out} row{'s' if left_out != 1 else ''} doing less than a full load (a lazy parse or "
                       "access, a resident load) left out: they would lead for doing less.") if left_out else ""
        charts.append(_tradeoff_chart(suite, compared, plan.group, suffix, suffix_note))
        if plan.growth_by_group:
            charts += [_growth_chart(suite, members, plan, value) for value, members in _groups(results, plan.group)]
        else:
            charts.append(_growth_chart(suite, results, plan))
        for value, members in _groups(largest, plan.group):
            charts.append(_time_chart(suite, members, plan, value, suffix))
    return [chart for chart in charts if chart is not None]


def machine_chart(ratios: Sequence[tuple[float, float]], probes: Sequence[tuple[float, float]] = ()) -> Chart | None:
    """The machine's speed round by round through the run; ``None`` with under two rounds of either figure.

    ``probes``: each round's median of the machine probe timed beside its
    samples, over the run's (:func:`~stratabench.report.provenance.probe_ratios`);
    ``ratios``: the reference workload's snapshot after each round, over its
    median. A flat line at 1 is a quiet machine; the line's swings are the
    drift every cell's interval now includes, and that paired ratios cancel.
    """
    import matplotlib

    curves = [Curve(label, tuple(points)) for label, points in
              (("probe beside the samples, round median", probes), ("reference workload after the round", ratios))
              if len(points) >= 2]
    if not curves:
        return None
    with matplotlib.rc_context(_RC):
        return curve_chart(
            "machine-speed", "the machine's speed during the run",
            "A fixed pure-Python loop, over its median: above 1, the machine was slower then. The probe is timed "
            "beside every sample in its worker (the line: each round's median); the reference workload once after "
            "each round, a snapshot a short slow spell can fall on. Each cell's interval spans these rounds; paired "
            "ratios cancel them.",
            curves,
            CurveAxes("seconds into the run", "time / median", lambda v: "-" if v is None else f"{v:.0f} s",
                      lambda v: "-" if v is None else f"{v:.2f}×"),
            mark_label="", limit=1.0, limit_label="median")
