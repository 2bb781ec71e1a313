"""Human formatting of durations, byte counts and plain counts."""

from __future__ import annotations

import math

__all__ = ["RATIO_CEILING", "RATIO_FLOOR", "format_bytes", "format_count", "format_ns", "format_ratio", "format_significant"]


def format_ns(value: float | None) -> str:
    """Format nanoseconds with a unit that keeps 3 to 4 significant digits.

    ``None`` (not measured) formats as ``-``.
    """
    if value is None:
        return "-"
    magnitude = abs(value)
    for limit, divisor, unit in ((1e3, 1.0, "ns"), (1e6, 1e3, "µs"), (1e9, 1e6, "ms")):
        if magnitude < limit:
            return f"{format_significant(value / divisor)} {unit}" if magnitude >= 1 or unit != "ns" else f"{value:.3f} ns"
    return f"{value / 1e9:.3f} s"


def format_bytes(value: float | None) -> str:
    """Format a byte count in decimal units (kB, MB), as the studies print sizes."""
    if value is None:
        return "-"
    magnitude = abs(value)
    for limit, divisor, unit in ((1e3, 1.0, "B"), (1e6, 1e3, "kB"), (1e9, 1e6, "MB")):
        if magnitude < limit:
            return f"{value:.0f} B" if unit == "B" else f"{value / divisor:.1f} {unit}"
    return f"{value / 1e9:.2f} GB"


def format_count(value: float | None) -> str:
    """Format a count with thousands separators, keeping fractions below 10."""
    if value is None:
        return "-"
    if value != int(value) and abs(value) < 10:
        return f"{value:.2f}"
    return f"{round(value):,}"


#: Ratios beyond these bounds are printed as the bound: a factor of ten thousand already says "not comparable",
#: and more digits would only report the noise of a near-zero denominator.
RATIO_CEILING = 10_000.0
RATIO_FLOOR = 1 / RATIO_CEILING


def format_ratio(value: float | None) -> str:
    """Format a ratio as ``2.31×`` (three significant digits, never scientific notation).

    ``None`` formats as ``-``; ratios beyond :data:`RATIO_CEILING` (or below
    :data:`RATIO_FLOOR`) are printed as ``>10,000×`` (``<0.0001×``).
    """
    if value is None:
        return "-"
    if value > RATIO_CEILING:
        return f">{RATIO_CEILING:,.0f}×"
    if 0 < value < RATIO_FLOOR:
        return f"<{RATIO_FLOOR:.4f}×"
    if value >= 100:
        return f"{value:,.0f}×"
    return f"{format_significant(value)}×"


def format_significant(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` significant digits in plain decimal notation (``0.00123``, ``12.3``)."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"
