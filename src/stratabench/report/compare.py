"""Ratios between cells: paired per round, flagged when within noise, or tested on the raw samples.

:func:`paired` is the ratio the studies' verdicts, targets and answers
use: the median of the per-round ratios of two cells measured in the same
rounds, with its own interval; it is within noise ("too close to call")
unless that interval excludes 1. For a file from before rounds it falls back
to :func:`ratio`, which compares two summaries (their intervals overlap or
not). Both are printed one way everywhere in the studies' tables, printed one way everywhere: ``2.31×``, ``2.31× ~`` when
the two confidence intervals overlap, and ``1.00× (base)`` on the row every
other row is divided by (:data:`BASE`); exports take :attr:`Ratio.value`, a
float. :func:`compare_samples` compares two runs of one cell the way a
regression gate must: a rank test on the raw samples and the ratio's own
confidence interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stratabench.results.records import CellResult, judged_metric_of, paired_ratio_of
from stratabench.results.stats import CLEAR_LEVEL, Summary
from stratabench.units import format_ratio

__all__ = ["BASE", "Ratio", "SampleTest", "compare_exact", "compare_samples", "paired", "ratio", "ratio_text"]


@dataclass(frozen=True)
class Ratio:
    """``numerator / denominator`` of two medians.

    Attributes
    ----------
    value
        The ratio of the medians.
    within_noise
        The two medians' confidence intervals overlap, so the data cannot
        tell the two apart.
    base
        This is the baseline row itself (``1.00× (base)``).
    low, high
        The interval of a paired ratio (:func:`paired`); ``None`` for a
        ratio of two medians.
    """

    value: float
    within_noise: bool
    base: bool = False
    low: float | None = None
    high: float | None = None

    def clear_of(self, bound: float) -> bool | None:
        """Whether the ratio is surely above (``True``) or below (``False``) ``bound``; ``None``: too close to call.

        A paired ratio is sure when its interval lies on one side of the
        bound; a ratio of two medians when the medians' intervals do not
        overlap (the rule before rounds).
        """
        if self.low is not None and self.high is not None:
            return True if self.low > bound else False if self.high < bound else None
        if self.within_noise:
            return None
        return self.value >= bound

    def __str__(self) -> str:
        if self.base:
            return f"{format_ratio(self.value)} (base)"
        return format_ratio(self.value) + (" ~" if self.within_noise else "")


BASE = Ratio(1.0, False, base=True)
"""The one baseline marker: the row the others are divided by reads ``1.00× (base)``."""


def ratio(numerator: Summary | None, denominator: Summary | None) -> Ratio | None:
    """The ratio of two summaries' medians, or ``None`` if either is missing or zero."""
    if numerator is None or denominator is None or denominator.median == 0:
        return None
    return Ratio(numerator.median / denominator.median, numerator.overlaps(denominator))


def paired(numerator: CellResult | None, denominator: CellResult | None, metric_name: str | None = None) -> Ratio | None:
    """``numerator / denominator`` as the median of their per-round ratios, within noise unless its interval excludes 1.

    ``metric_name`` ``None`` takes the metric both cells are judged on
    (:func:`~stratabench.results.records.judged_metric_of`). Falls back to
    :func:`ratio` of the two medians when the cells have no common rounds (a
    file from before rounds); ``None`` when either cell or its metric is
    missing.
    """
    if numerator is None or denominator is None:
        return None
    metric_name = metric_name or judged_metric_of(numerator, denominator)
    measured = paired_ratio_of(numerator, denominator, metric_name)
    if measured is None:
        return ratio(numerator.summary(metric_name), denominator.summary(metric_name))
    if measured.level < CLEAR_LEVEL:  # too few pairs for any interval to settle it
        return Ratio(measured.value, True)
    return Ratio(measured.value, not measured.clear(1.0), low=measured.low, high=measured.high)


def ratio_text(value: Any) -> str:
    """A ratio column's formatter: ``-`` for none, the ratio's own text otherwise."""
    return "-" if value is None else str(value)


#: Bootstrap resamples for a ratio's interval: enough for a stable 95% percentile
#: interval, cheap (vectorised) for a few hundred cells.
_RESAMPLES = 2000


@dataclass(frozen=True)
class SampleTest:
    """Two runs' raw samples of one metric, tested against each other.

    Attributes
    ----------
    ratio
        ``median(after) / median(before)``.
    low, high
        The ratio's bootstrap confidence interval (percentile method, both
        samples resampled independently; the seed is fixed, so a comparison
        is reproducible).
    level
        The interval's nominal confidence.
    p_value
        Two-sided Mann–Whitney U test on the raw samples: the chance of
        ranks this far apart if both runs came from one distribution. It
        assumes nothing about the distribution's shape, as benchstat and
        asv do for timings. ``nan`` for an exact metric, which no test judges.
    exact
        The metric is counted, not sampled (:func:`compare_exact`): the ratio
        is the ratio itself, with no interval around it.
    """

    ratio: float
    low: float
    high: float
    level: float
    p_value: float
    exact: bool = False

    @property
    def p_text(self) -> str:
        """The p-value as printed: ``exact`` for a counted metric."""
        return "exact" if self.exact else f"{self.p_value:.3g}"


def compare_samples(before: Sequence[float], after: Sequence[float], *, confidence: float = 0.95) -> SampleTest | None:
    """Test ``after`` against ``before``; ``None`` when a median is zero or a value not finite.

    Parameters
    ----------
    before, after
        Raw samples of one metric (at least one each).
    confidence
        The ratio interval's level.
    """
    import numpy as np
    from scipy.stats import bootstrap, mannwhitneyu

    first, second = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    if not (first.size and second.size and np.isfinite(first).all() and np.isfinite(second).all()):
        return None
    base = float(np.median(first))
    if base == 0:
        return None
    value = float(np.median(second)) / base
    p_value = float(mannwhitneyu(first, second, alternative="two-sided").pvalue)
    if first.size < 2 or second.size < 2:
        low = high = value  # one sample has no spread to resample
    else:
        def ratio_of_medians(a: Any, b: Any, axis: int) -> Any:
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.median(b, axis=axis) / np.median(a, axis=axis)

        interval = bootstrap((first, second), ratio_of_medians, vectorized=True, n_resamples=_RESAMPLES,
                             method="percentile", confidence_level=confidence,
                             random_state=np.random.default_rng(0)).confidence_interval
        low, high = float(interval.low), float(interval.high)
        if not (math.isfinite(low) and math.isfinite(high)):  # a resample with a zero median
            low, high = min(low, value) if math.isfinite(low) else 0.0, max(high, value) if math.isfinite(high) else math.inf
    return SampleTest(value, min(low, value), max(high, value), confidence,
                      1.0 if math.isnan(p_value) else p_value)


def compare_exact(before: Sequence[float], after: Sequence[float]) -> SampleTest | None:
    """Two runs' values of an exact metric (a count): the ratio of their medians, with no test and no interval.

    ``None`` when a median is zero or a value not finite. Counts repeat (or
    nearly: the metric's tolerance says how nearly), so a sample's spread
    says nothing a test could use.
    """
    import statistics

    if not (before and after) or not all(math.isfinite(value) for value in (*before, *after)):
        return None
    base = statistics.median(before)
    if base == 0:
        return None
    value = statistics.median(after) / base
    return SampleTest(value, value, value, 1.0, math.nan, exact=True)
