"""Summaries of raw samples: median with a distribution-free confidence interval.

Timings are skewed (a sample can only be slowed down, by the scheduler, a
page fault or a collection), so the median is the centre and its confidence
interval comes from order statistics, which assume nothing about the shape
of the distribution.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Summary", "median_ci_ranks", "summarize"]

#: Confidence wanted for the interval of the median.
CONFIDENCE = 0.95


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
