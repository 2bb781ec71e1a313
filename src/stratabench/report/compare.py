"""Ratios between medians, flagged when the difference is within noise."""

from __future__ import annotations

from dataclasses import dataclass

from stratabench.results.stats import Summary
from stratabench.units import format_ratio

__all__ = ["Ratio", "ratio"]


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
    """

    value: float
    within_noise: bool

    def __str__(self) -> str:
        return format_ratio(self.value) + (" ~" if self.within_noise else "")


def ratio(numerator: Summary | None, denominator: Summary | None) -> Ratio | None:
    """The ratio of two summaries' medians, or ``None`` if either is missing or zero."""
    if numerator is None or denominator is None or denominator.median == 0:
        return None
    return Ratio(numerator.median / denominator.median, numerator.overlaps(denominator))
