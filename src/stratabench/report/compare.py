"""Ratios between medians, flagged when the difference is within noise.

One way to print them everywhere: ``2.31×``, ``2.31× ~`` when the two
confidence intervals overlap, and ``1.00× (base)`` on the row every other
row is divided by (:data:`BASE`). Exports take :attr:`Ratio.value`, a float.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stratabench.results.stats import Summary
from stratabench.units import format_ratio

__all__ = ["BASE", "Ratio", "ratio", "ratio_text"]


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
    """

    value: float
    within_noise: bool
    base: bool = False

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


def ratio_text(value: Any) -> str:
    """A ratio column's formatter: ``-`` for none, the ratio's own text otherwise."""
    return "-" if value is None else str(value)
