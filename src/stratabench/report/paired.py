"""The one ratio an answer may claim: two cells of one comparison → a median ratio with its interval.

Every answer (a study's, ``advise``'s) gets the ratios it prints from
:func:`paired_ratio`, so how a ratio is computed is decided in this one place:

- two cells measured in the same rounds (the engine's rounds): the median of
  the per-round ratios with its order-statistic interval
  (:func:`~stratabench.results.records.paired_ratio_of`), the machine's drift
  between rounds cancelled;
- cells without rounds (a study's own tries, parking's suite runs, a load
  run's intervals, a file from before rounds): the ratio of the two medians,
  its interval a bootstrap of both sets of samples
  (:func:`~stratabench.report.compare.compare_samples`).

A ratio is only as sure as what is behind it: paired, below the rounds'
:data:`~stratabench.results.stats.CLEAR_LEVEL` (five pairs); unpaired, with
fewer than :data:`ENOUGH` samples a side (no interval reaches a real 95%),
the ratio is *too few to judge* whatever its interval says
(:attr:`PairedRatio.enough`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from stratabench.report.compare import compare_samples
from stratabench.results.records import CellResult, judged_metric_of, paired_ratio_of
from stratabench.results import stats
from stratabench.results.stats import CLEAR_LEVEL, floor_samples, level_label
from stratabench.units import format_ratio

__all__ = ["ENOUGH", "PairedRatio", "Sureness", "geometric_mean", "paired_ratio", "ratio_of_rounds",
           "ratio_of_samples"]

ENOUGH = floor_samples()
"""Samples a side below which a ratio is too few to judge: the fewest whose median interval reaches 95% (6)."""

Sureness = Literal["clear", "too close to call", "too few to judge"]


@dataclass(frozen=True)
class PairedRatio:
    """``numerator / denominator`` of one metric, with the ratio's confidence interval.

    Attributes
    ----------
    value
        The ratio of the medians (above 1: the numerator is larger).
    low, high
        The ratio's confidence interval.
    level
        The interval's nominal level.
    n
        Pairs of rounds, or (unpaired) samples on the side with fewer.
    paired
        Whether the ratio is a median of per-round ratios (the two cells measured back to back).
    """

    value: float
    low: float
    high: float
    level: float
    n: int
    paired: bool = False

    @property
    def enough(self) -> bool:
        """Whether the interval means what it says: paired, at the rounds' clear level (five pairs or more);
        unpaired, with :data:`ENOUGH` samples a side."""
        return self.level >= CLEAR_LEVEL if self.paired else self.n >= ENOUGH

    def sureness(self, bound: float = 1.0) -> Sureness:
        """*clear* when enough samples and the interval lies wholly beyond ``bound`` (or below ``1/bound``)."""
        if not self.enough:
            return "too few to judge"
        return "clear" if self.low > bound or self.high < 1 / bound else "too close to call"

    @property
    def inverse(self) -> PairedRatio:
        """``denominator / numerator``, its interval flipped."""
        return PairedRatio(1 / self.value, 1 / self.high if self.high else math.inf,
                           1 / self.low if self.low else math.inf, self.level, self.n, self.paired)

    @property
    def interval(self) -> str:
        """``[1.62-2.05×, 95%]``; ``[one sample a side]`` when there is no interval."""
        if self.n < 2:
            return "[one pair]" if self.paired else "[one sample a side]"
        pairs = f", {self.n} pairs" if self.paired else ""
        return f"[{format_ratio(self.low).removesuffix('×')}-{format_ratio(self.high)}, {level_label(self.level)}{pairs}]"

    def __str__(self) -> str:
        return f"{format_ratio(self.value)} {self.interval}"

    def to_json(self) -> dict[str, Any]:
        return {"ratio": self.value, "ci_low": self.low, "ci_high": self.high, "ci_level": self.level,
                "n": self.n, "paired": self.paired, "enough": self.enough}


def ratio_of_samples(numerator: Sequence[float], denominator: Sequence[float]) -> PairedRatio | None:
    """The ratio of two sets of samples with its interval; ``None`` when a side is empty or has a zero median."""
    test = compare_samples(denominator, numerator)
    if test is None:
        return None
    return PairedRatio(test.ratio, test.low, test.high, test.level, min(len(numerator), len(denominator)))


def ratio_of_rounds(numerator: Mapping[int, float], denominator: Mapping[int, float]) -> PairedRatio | None:
    """Two figures derived round by round (round number → value, as a cost from each round's CPU), paired as
    two cells' are: the median of the per-round ratios with its interval; ``None`` when no round has both."""
    paired = stats.paired_ratio(numerator, denominator)
    return None if paired is None else _of_rounds(paired)


def _of_rounds(paired: stats.PairedRatio) -> PairedRatio:
    return PairedRatio(paired.value, paired.low, paired.high, paired.level, paired.pairs, paired=True)


def paired_ratio(numerator: CellResult | None, denominator: CellResult | None,
                 metric: str | None = None) -> PairedRatio | None:
    """``numerator / denominator`` on ``metric``; ``None`` when a cell is missing, failed or lacks the metric.

    ``metric`` ``None`` takes the metric both cells are judged on
    (:func:`~stratabench.results.records.judged_metric_of`): the thread's
    CPU time when both work inside their worker, else wall time.
    """
    if numerator is None or denominator is None or not numerator.ok or not denominator.ok:
        return None
    metric = metric or judged_metric_of(numerator, denominator)
    paired = paired_ratio_of(numerator, denominator, metric)
    if paired is not None:
        return _of_rounds(paired)
    a, b = numerator.metrics.get(metric), denominator.metrics.get(metric)
    if a is None or b is None:
        return None
    return ratio_of_samples(a.samples, b.samples)


def geometric_mean(ratios: Sequence[PairedRatio]) -> PairedRatio | None:
    """Several ratios of one family of operations as one: the geometric mean of the values and of each bound.

    The bounds' mean is the ratio if every part sat at its bound at once, so the interval is no
    narrower than the parts allow; ``n`` is the smallest part's.
    """
    if not ratios:
        return None

    def mean(values: Sequence[float]) -> float:
        return math.exp(sum(math.log(v) for v in values) / len(values)) if all(v > 0 for v in values) else 0.0

    return PairedRatio(mean([r.value for r in ratios]), mean([r.low for r in ratios]),
                       mean([r.high for r in ratios]) if all(math.isfinite(r.high) for r in ratios) else math.inf,
                       min(r.level for r in ratios), min(r.n for r in ratios), all(r.paired for r in ratios))
