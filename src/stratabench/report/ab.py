"""The verdicts of ``stratabench ab``: each cell's paired ratio B/A with its interval, and one of four words.

Each round measured both sides of a cell back to back, so each round gives
one ratio B/A in which the machine's speed at that moment cancels. The
cell's ratio is the median of those per-round ratios, with the
distribution-free confidence interval of a median: the paired ratio of
:func:`stratabench.results.records.paired_ratio_of`, as every report pairs
two cells. Its verdict is:

- **slower** / **faster** (the metric's words): the interval excludes 1 and
  the ratio is beyond the minimum effect;
- **unchanged**: the whole interval lies within the minimum effect of 1;
- **inconclusive**: neither; the report says how large a change the
  interval still allows, and ``--until-sure`` measures such cells again.

Fewer than five pairs reach no interval of 90%
(:data:`~stratabench.results.stats.CLEAR_LEVEL`): such a cell is
inconclusive whatever its ratio. An exact metric (``--count
instructions``) needs no pairs: its two counts are compared by the metric's
tolerance, as ``compare`` does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from stratabench.metrics import Metric
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult, paired_ratio_of
from stratabench.results.stats import CLEAR_LEVEL

__all__ = ["INCONCLUSIVE", "AbVerdict", "ab_summary", "ab_table", "judge"]

#: The verdict of a cell whose interval neither clears 1 nor rules the minimum effect out.
INCONCLUSIVE = "inconclusive"

@dataclass(frozen=True)
class AbVerdict:
    """One cell's comparison of side B with side A.

    Attributes
    ----------
    suite, cell
        The cell.
    a, b
        Each side's median of its per-round values.
    ratio, low, high, level
        The median of the per-round ratios B/A and its interval at ``level``
        (for an exact metric: the ratio of the counts, ``level`` 1).
    pairs
        The rounds that measured both sides.
    verdict
        ``slower``/``faster`` (or the metric's words), ``unchanged`` or ``inconclusive``.
    worse
        Whether the verdict is a change for the worse.
    """

    suite: str
    cell: str
    a: float
    b: float
    ratio: float
    low: float
    high: float
    level: float
    pairs: int
    verdict: str
    worse: bool

    @property
    def inconclusive(self) -> bool:
        return self.verdict == INCONCLUSIVE


def judge(a: CellResult, b: CellResult, measured: Metric, min_effect: float) -> AbVerdict | None:
    """The verdict on one cell from each side's result, its rounds merged; ``None`` when no round measured both.

    The ratio and its interval are :func:`~stratabench.results.records.paired_ratio_of`'s, the one paired
    ratio every report uses; an exact metric is judged by its tolerance instead.
    """
    up, down = measured.change_words
    a_value, b_value = a.median(measured.name), b.median(measured.name)
    if not (a.ok and b.ok) or a_value is None or b_value is None or a_value == 0:
        return None
    if measured.exact:
        ratio = b_value / a_value
        moved = measured.beyond_tolerance(a_value, b_value)
        word = "unchanged" if not moved else up if ratio > 1 else down
        return AbVerdict(a.suite, a.cell, a_value, b_value, ratio, ratio, ratio, 1.0, 1, word,
                         moved and (ratio > 1) == (measured.better == "lower"))
    paired = paired_ratio_of(b, a, measured.name)
    if paired is None:
        return None
    bound = 1 + min_effect
    if paired.clear() and paired.low > 1 and paired.value > bound:
        word = up
    elif paired.clear() and paired.high < 1 and paired.value < 1 / bound:
        word = down
    elif paired.level >= CLEAR_LEVEL and paired.low >= 1 / bound and paired.high <= bound:
        word = "unchanged"
    else:
        word = INCONCLUSIVE
    worse = word == (up if measured.better == "lower" else down)
    return AbVerdict(a.suite, a.cell, a_value, b_value, paired.value, paired.low, paired.high, paired.level,
                     paired.pairs, word, worse)


def ab_summary(verdicts: Sequence[AbVerdict], measured: Metric, min_effect: float, not_compared: int) -> str:
    """One line: cells compared, how many each word, the geomean ratio, the rule."""
    up, down = measured.change_words
    counts = {word: sum(1 for v in verdicts if v.verdict == word) for word in (up, down, "unchanged", INCONCLUSIVE)}
    logs = [math.log(v.ratio) for v in verdicts if v.ratio > 0]
    geomean = f"{math.exp(sum(logs) / len(logs)):.3f}" if logs else "-"
    rule = (f"exact, tolerance {measured.tolerance or 0:.1%}" if measured.exact else
            f"paired per round; a change: the interval excludes 1 and the ratio is beyond {min_effect:.0%}")
    return (f"{len(verdicts)} cells compared: {counts[up]} {up}, {counts[down]} {down}, {counts['unchanged']} "
            f"unchanged, {counts[INCONCLUSIVE]} {INCONCLUSIVE}; geomean ratio {geomean} ({measured.name}, B/A; "
            f"{rule}); {not_compared} not compared")


def ab_table(verdicts: Sequence[AbVerdict], measured: Metric, title: str, notes: Sequence[str]) -> Table:
    """One row per compared cell: both sides, the paired ratio with its interval, the pairs and the verdict."""
    fmt = measured.format
    table = Table(title, [
        Column("suite", "suite"), Column("cell", "cell"), Column("a", "A", "right", fmt),
        Column("b", "B", "right", fmt), Column("ratio", "B/A", "right"), Column("interval", "interval", "right"),
        Column("pairs", "pairs", "right"), Column("verdict", "verdict"),
    ])
    for v in verdicts:
        table.rows.append({
            "suite": v.suite, "cell": v.cell, "a": v.a, "b": v.b, "ratio": f"{v.ratio:.3f}",
            "interval": "exact" if v.level == 1.0 and v.low == v.high else
            f"{v.low:.3f}–{v.high:.3f} ({v.level:.0%})", "pairs": v.pairs, "verdict": v.verdict,
        })
    table.notes = list(notes)
    return table
