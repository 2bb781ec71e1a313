"""Summaries of raw samples: median with a distribution-free confidence interval.

Timings are skewed (a sample can only be slowed down, by the scheduler, a
page fault or a collection), so the median is the centre and its confidence
interval comes from order statistics, which assume nothing about the shape
of the distribution.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "CLEAR_LEVEL",
    "PairedRatio",
    "WIDE_INTERVAL",
    "Summary",
    "floor_samples",
    "instability",
    "level_label",
    "median_ci_ranks",
    "paired_ratio",
    "round_ratios",
    "round_values",
    "summarize",
]

#: Confidence wanted for the interval of the median.
CONFIDENCE = 0.95

#: A cell whose median's interval is wider than this (relative half-width) is flagged, whatever
#: its sampling aimed at: a fixed count of samples (``--samples``, the Go cells) can leave it so.
WIDE_INTERVAL = 0.05


@dataclass(frozen=True)
class Summary:
    """The summary of one metric's samples.

    Attributes
    ----------
    n
        Number of samples.
    median, min, max, mean
        Of the samples.
    stdev
        Sample standard deviation; ``None`` with fewer than two samples.
    ci_low, ci_high
        Confidence interval of the median, from order statistics.
    ci_level
        The interval's real coverage. It is 0.95 or more when there are six
        samples or more; with fewer, no pair of order statistics reaches 95%
        and the interval is the full range, with the lower coverage it has
        (for example 0.9375 with five samples, 0 with one).
    """

    n: int
    median: float
    min: float
    max: float
    mean: float
    stdev: float | None
    ci_low: float
    ci_high: float
    ci_level: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Summary:
        return cls(**data)

    @property
    def relative_half_width(self) -> float:
        """Half the interval's width over the median: 0.02 means ``median ± 2%``; infinite for a zero median."""
        width = (self.ci_high - self.ci_low) / 2
        if self.median == 0:
            return 0.0 if width == 0 else math.inf
        return width / abs(self.median)

    def overlaps(self, other: Summary) -> bool:
        """Whether the two medians' confidence intervals overlap (a difference within noise)."""
        return self.ci_low <= other.ci_high and other.ci_low <= self.ci_high


def _binomial_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2)."""
    return float(sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def median_ci_ranks(n: int, confidence: float = CONFIDENCE) -> tuple[int, int, float]:
    """Ranks (1-based) of the order statistics bounding the median, and their coverage.

    The interval [x_(l), x_(n-l+1)] covers the population median with
    probability 1 - 2·P(X <= l-1), X ~ Binomial(n, 1/2); ``l`` is the
    largest rank that keeps that at or above ``confidence``.
    """
    if n < 1:
        raise ValueError("no samples")
    low = 1
    while low + 1 <= (n + 1) // 2 and 1 - 2 * _binomial_cdf(low, n) >= confidence:
        low += 1
    coverage = max(0.0, 1 - 2 * _binomial_cdf(low - 1, n))
    return low, n - low + 1, coverage


def summarize(samples: Sequence[float]) -> Summary:
    """Summarize raw samples (at least one)."""
    if not samples:
        raise ValueError("cannot summarize zero samples")
    ordered = sorted(samples)
    n = len(ordered)
    low, high, level = median_ci_ranks(n)
    return Summary(
        n=n,
        median=float(statistics.median(ordered)),
        min=ordered[0],
        max=ordered[-1],
        mean=statistics.fmean(ordered),
        stdev=statistics.stdev(ordered) if n > 1 else None,
        ci_low=ordered[low - 1],
        ci_high=ordered[high - 1],
        ci_level=round(level, 6),
    )


def floor_samples(confidence: float = CONFIDENCE) -> int:
    """The fewest samples whose order-statistic interval of the median reaches ``confidence``.

    Six for 95% (the full range then covers 96.9%), eight for 99%.
    """
    n = 1
    while median_ci_ranks(n, confidence)[2] < confidence:
        n += 1
    return n


def level_label(level: float) -> str:
    """An interval's level as printed: ``95%``, ``93.75%``, ``75%``: never rounded up to a level it does not reach."""
    percent = math.floor(level * 10_000) / 100
    return f"{percent:.2f}".rstrip("0").rstrip(".") + "%"


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def instability(summary: Summary, *, target: float | None = None, target_missed: bool = False,
                budget_s: float | None = None, counted: str = "samples", metric: str = "wall_ns") -> list[str]:
    """Why a cell's median is not known well enough, as one line with its figures; empty if it is.

    One reason only: the median's interval is wider than the cell's
    ``target`` (:data:`WIDE_INTERVAL` when it aimed at none, a fixed count).
    The interval is what every ratio and verdict built on the cell rests
    on; a high stdev or a far sample around a tight interval leaves the
    median sure (the median ignores them), so neither flags a cell.

    Parameters
    ----------
    summary
        Of the cell's judged metric: its per-round values in a run, its
        samples otherwise.
    target
        The relative half-width the sampling aimed at.
    target_missed
        The sampling stopped (budget spent or cap reached) before the
        interval reached ``target``: the flag then names the budget spent.
    budget_s
        The time budget that was spent, for the message.
    counted
        What the summary's values are, for the message: ``samples``, or
        ``rounds`` when it summarizes per-round values.
    metric
        The metric the summary is of, named in the flag: a flag without its
        metric cannot be checked against the table.
    """
    bound = WIDE_INTERVAL if target is None else target
    width = summary.relative_half_width
    if width <= bound:
        return []
    spent = f"; {budget_s:g} s budget spent" if budget_s is not None and target_missed else ""
    aim = "target" if target is not None else "limit"
    return [f"{metric}: interval ±{_percent(width)} of the median > ±{_percent(bound)} {aim}, "
            f"from {summary.n} {counted} ({level_label(summary.ci_level)}){spent}"]


def round_values(samples: Sequence[float], rounds: Sequence[int]) -> dict[int, float]:
    """Each round's value: the median of the samples taken in it, keyed by round, in round order.

    A round is one fresh worker at one moment of the run; its samples share
    that moment (the machine's speed, the neighbours), so they are one
    observation of the cell, not several. The spread between rounds is the
    spread a later run will see.
    """
    if len(samples) != len(rounds):
        raise ValueError(f"{len(samples)} samples but {len(rounds)} round numbers")
    taken: dict[int, list[float]] = {}
    for value, number in zip(samples, rounds):
        taken.setdefault(number, []).append(value)
    return {number: float(statistics.median(taken[number])) for number in sorted(taken)}


#: The lowest interval level at which a paired ratio may be called clear: five pairs (93.75%) or more.
#: With fewer, the interval is the full range of two to four ratios, which excludes 1 by chance too often.
CLEAR_LEVEL = 0.9


@dataclass(frozen=True)
class PairedRatio:
    """The median of per-round ratios of two cells measured back to back, with its interval.

    Attributes
    ----------
    value
        The median of the per-round ratios ``numerator / denominator``.
    low, high
        The order-statistic confidence interval of that median (as for a
        cell's own median: distribution-free).
    level
        The interval's real coverage (0.9375 with five pairs).
    pairs
        How many rounds measured both cells.
    """

    value: float
    low: float
    high: float
    level: float
    pairs: int

    def clear(self, bound: float = 1.0) -> bool:
        """Whether the interval lies wholly on one side of ``bound`` (1: the two differ), at a level of at least :data:`CLEAR_LEVEL`."""
        return self.level >= CLEAR_LEVEL and (self.low > bound or self.high < bound)

    def verdict(self, bound: float = 1.0) -> str:
        """``above``, ``below`` (``bound``) or ``too close to call``."""
        if not self.clear(bound):
            return "too close to call"
        return "above" if self.low > bound else "below"

    def __str__(self) -> str:
        return f"{self.value:.2f}× [{self.low:.2f}–{self.high:.2f}, {level_label(self.level)}, {self.pairs} pairs]"


def round_ratios(numerator: Mapping[int, float], denominator: Mapping[int, float]) -> list[float]:
    """The per-round ratios of two cells' per-round values, in the numerator's round order: only rounds that
    measured both, and not those whose denominator is zero."""
    return [numerator[number] / denominator[number] for number in numerator
            if number in denominator and denominator[number] != 0]


def paired_ratio(numerator: Mapping[int, float], denominator: Mapping[int, float]) -> PairedRatio | None:
    """The paired ratio of two cells' per-round values (:func:`round_values`); ``None`` without a usable pair.

    Only rounds that measured both count, and each ratio is taken within one
    round, so the machine's speed in that round cancels: two medians taken
    minutes apart carry the machine's drift between them, a paired ratio
    does not. A round whose denominator is zero is left out.
    """
    ratios = round_ratios(numerator, denominator)
    if not ratios:
        return None
    summary = summarize(ratios)
    return PairedRatio(summary.median, summary.ci_low, summary.ci_high, summary.ci_level, summary.n)
