"""The verdicts of ``stratabench ab``: each cell's paired ratio B/A with its interval, and one of four words.

Each round measured both sides of a cell back to back, so each round gives
one ratio B/A (of each visit's least sample: :func:`least_per_round`) in
which the machine's speed at that moment cancels. The cell's ratio is the
geometric mean of those per-round ratios, and its
interval Student's t interval of the mean of their logarithms
(``scipy.stats.t``), at the **family level** :func:`family_level`:
``1 - 0.05 / (cells x looks)``, Bonferroni's correction for every cell
compared and every time ``--until-sure`` judges them again. Its verdict is:

- **slower** / **faster** (the metric's words): the interval excludes 1 and
  the ratio is beyond the minimum effect;
- **unchanged**: the whole interval lies within the minimum effect of 1;
- **inconclusive**: neither; the report says how large a change the
  interval still allows, and ``--until-sure`` measures such cells again.

Why this rule. ``ab`` judges a few hundred cells at once (331 over the
default suites), and a team gates on it: the target is at most one cell in
300 called changed when nothing changed. The per-cell interval of a median
(the order statistics of six ratios, 96.9%) calls an unchanged cell
changed whenever its six ratios fall on one side of 1, 1 time in 32: a
self-comparison of the default suites called 15 of 331 cells changed. At
the family level the chance that *any* unchanged cell of the run is called
changed is at most 5% (Bonferroni holds whatever the cells' dependence),
one cell in 300 is then far out of reach, and each extra look of
``--until-sure`` is paid for in the level, so re-measuring until a cell
happens to clear gains nothing. No distribution-free interval reaches such
a level with six pairs (the sign test's best is 1 in 32): the t interval
assumes the log-ratios are near normal, and an unchanged cell's are at
least symmetric (its two sides are exchangeable, each first in half the
rounds), where the t interval errs wide when the tails are heavy. What it
costs: a wider interval (t = 10.3 for 331 cells and six pairs, 6.2 for
32), so a noisy cell stays inconclusive until ``--until-sure`` adds rounds.

Fewer than two pairs give no interval: such a cell is inconclusive. An
exact metric (``--count instructions``) needs no pairs: its two counts are
compared by the metric's tolerance, as ``compare`` does.

A cell measured outside a Python worker (a Go program, treestore's worker,
parking's server) has no CPU time of the worker to compare: with the
default metric it is judged on its wall time instead (``fallback``), by the
same rule, and each verdict names the metric that judged it.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass


from stratabench.metrics import Metric
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult, MetricResult
from stratabench.results.stats import level_label

__all__ = ["FAMILY_ALPHA", "INCONCLUSIVE", "AbVerdict", "ab_summary", "ab_table", "family_level", "judge",
           "least_per_round", "log_ratio_interval", "rule_text", "verdict_word"]

#: The chance, at most, that a run calls any unchanged cell changed (split among its cells and looks).
FAMILY_ALPHA = 0.05

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
        The geometric mean of the per-round ratios B/A and its t interval at
        ``level`` (for an exact metric: the ratio of the counts, ``level`` 1).
    pairs
        The rounds that measured both sides.
    metric
        The metric that judged the cell (the one asked for, or the fallback).
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
    metric: str = ""

    @property
    def inconclusive(self) -> bool:
        return self.verdict == INCONCLUSIVE


def family_level(cells: int, looks: int = 1, alpha: float = FAMILY_ALPHA) -> float:
    """The interval level at which ``cells`` cells, each judged ``looks`` times, call any unchanged one changed
    with a chance of at most ``alpha`` (Bonferroni): ``1 - alpha / (cells x looks)``."""
    return 1 - alpha / (max(cells, 1) * max(looks, 1))


def verdict_word(ratio: float, low: float, high: float, min_effect: float, measured: Metric) -> str:
    """The word for a ratio and its interval (at the family level): the metric's word up or down when the
    interval excludes 1 and the ratio is beyond ``min_effect``, ``unchanged`` when the whole interval is
    within it, :data:`INCONCLUSIVE` otherwise. ``compare`` judges two runs by the same words."""
    up, down = measured.change_words
    bound = 1 + min_effect
    if low > 1 and ratio > bound:
        return up
    if high < 1 and ratio < 1 / bound:
        return down
    if low >= 1 / bound and high <= bound:
        return "unchanged"
    return INCONCLUSIVE


def log_ratio_interval(ratios: Sequence[float], level: float) -> tuple[float, float, float] | None:
    """The geometric mean of ``ratios`` and the t interval of the mean of their logs at ``level``, as ratios;
    ``None`` with fewer than two (positive) ratios."""
    logs = [math.log(r) for r in ratios if r > 0]
    if len(logs) < 2:
        return None
    # Imported here, not with the module: the command line imports every command's module to build its parser,
    # and scipy.stats cost every `stratabench run` about half a second of its start.
    from scipy import stats

    mean = math.fsum(logs) / len(logs)
    error = float(stats.sem(logs))
    if error == 0:
        return math.exp(mean), math.exp(mean), math.exp(mean)
    low, high = stats.t.interval(level, len(logs) - 1, loc=mean, scale=error)
    # Two wild pairs at a family level give a bound past a float's range (t = 637 for one degree of freedom at
    # 99.9%): an unbounded interval, which leaves the cell inconclusive.
    return math.exp(mean), _exp(float(low)), _exp(float(high))


def _exp(value: float) -> float:
    """``e ** value``, infinite past a float's range instead of an OverflowError."""
    return math.inf if value > _LARGEST_LOG else math.exp(value)


#: The largest value whose exponential a float holds.
_LARGEST_LOG = math.log(sys.float_info.max)


def least_per_round(measured: MetricResult) -> dict[int, float]:
    """Round → the least of the samples one visit took (its rounds must be known).

    Interference only adds time (a neighbour's burst, a page fault, a
    migration), so a visit's least sample is its least disturbed. On last
    session's self-comparison of the default suites (load 12), the spread of
    a cell's per-round log-ratios was a quarter smaller with each visit's
    least sample than with its median (median cell 5.7% against 7.5%), and
    an unchanged cell's two sides stay exchangeable, so the interval keeps
    its level.
    """
    assert measured.rounds is not None
    least: dict[int, float] = {}
    for value, number in zip(measured.samples, measured.rounds):
        least[number] = min(value, least.get(number, value))
    return least


def judge(a: CellResult, b: CellResult, measured: Metric, min_effect: float,
          level: float = family_level(1), fallback: Metric | None = None) -> AbVerdict | None:
    """The verdict on one cell from each side's result, its rounds merged; ``None`` when no round measured both.

    The ratio and its interval are :func:`log_ratio_interval`'s over the rounds both sides measured, at
    ``level`` (:func:`family_level` of the cells compared); an exact metric is judged by its tolerance instead.
    A cell that lacks ``measured`` on either side is judged on ``fallback`` when both sides have that.
    """
    if fallback is not None and not (measured.name in a.metrics and measured.name in b.metrics):
        measured = fallback
    up, down = measured.change_words
    a_value, b_value = a.median(measured.name), b.median(measured.name)
    if not (a.ok and b.ok) or a_value is None or b_value is None or a_value == 0:
        return None
    if measured.exact:
        ratio = b_value / a_value
        moved = measured.beyond_tolerance(a_value, b_value)
        word = "unchanged" if not moved else up if ratio > 1 else down
        return AbVerdict(a.suite, a.cell, a_value, b_value, ratio, ratio, ratio, 1.0, 1, word,
                         moved and (ratio > 1) == (measured.better == "lower"), measured.name)
    first, second = a.metrics.get(measured.name), b.metrics.get(measured.name)
    if first is None or second is None or first.rounds is None or second.rounds is None:
        return None
    per_a, per_b = least_per_round(first), least_per_round(second)
    ratios = [per_b[number] / per_a[number] for number in per_b if number in per_a and per_a[number] != 0]
    if not ratios:
        return None
    interval = log_ratio_interval(ratios, level)
    ratio, low, high = interval if interval is not None else (ratios[0], 0.0, math.inf)
    word = verdict_word(ratio, low, high, min_effect, measured)
    worse = word == (up if measured.better == "lower" else down)
    return AbVerdict(a.suite, a.cell, a_value, b_value, ratio, low, high, level, len(ratios), word, worse,
                     measured.name)


def rule_text(min_effect: float, level: float) -> str:
    """The verdict rule in one phrase, for the summary line and the report."""
    return (f"paired per round (each visit's least sample); interval: t of the log-ratios at {level_label(level)}, 1 - 5% / (cells x looks); "
            f"a change: the interval excludes 1 and the ratio is beyond {min_effect:.0%}; unchanged: the interval "
            f"within {min_effect:.0%}")


def ab_summary(verdicts: Sequence[AbVerdict], measured: Metric, min_effect: float, not_compared: int,
               level: float) -> str:
    """One line: cells compared, how many each word, the geomean ratio, the metrics that judged them, the rule."""
    up, down = measured.change_words
    counts = {word: sum(1 for v in verdicts if v.verdict == word) for word in (up, down, "unchanged", INCONCLUSIVE)}
    logs = [math.log(v.ratio) for v in verdicts if v.ratio > 0]
    geomean = f"{math.exp(sum(logs) / len(logs)):.3f}" if logs else "-"
    rule = (f"exact, tolerance {measured.tolerance_text}" if measured.exact else
            rule_text(min_effect, level))
    judged_by = Counter(v.metric or measured.name for v in verdicts)
    metrics = (measured.name if set(judged_by) <= {measured.name} else
               ", ".join(f"{name} on {count}" for name, count in
                         sorted(judged_by.items(), key=lambda item: (item[0] != measured.name, item[0]))))
    return (f"{len(verdicts)} cells compared: {counts[up]} {up}, {counts[down]} {down}, {counts['unchanged']} "
            f"unchanged, {counts[INCONCLUSIVE]} {INCONCLUSIVE}; geomean ratio {geomean} ({metrics}, B/A; "
            f"{rule}); {not_compared} not compared")


def ab_table(verdicts: Sequence[AbVerdict], measured: Metric, title: str, notes: Sequence[str]) -> Table:
    """One row per compared cell: both sides, the paired ratio with its interval, the pairs and the verdict."""
    fmt = measured.format
    table = Table(title, [
        Column("suite", "suite"), Column("cell", "cell"), Column("a", "A", "right", fmt),
        Column("b", "B", "right", fmt), Column("ratio", "B/A", "right"), Column("interval", "interval", "right"),
        Column("pairs", "pairs", "right"), Column("metric", "judged on"), Column("verdict", "verdict"),
    ])
    for v in verdicts:
        table.rows.append({
            "suite": v.suite, "cell": v.cell, "a": v.a, "b": v.b, "ratio": f"{v.ratio:.3f}",
            "interval": "exact" if v.level == 1.0 and v.low == v.high else
            f"{v.low:.3f}–{v.high:.3f} ({level_label(v.level)})", "pairs": v.pairs,
            "metric": v.metric or measured.name, "verdict": v.verdict,
        })
    table.notes = list(notes)
    return table
