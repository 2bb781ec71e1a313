"""Human formatting of durations, byte counts and plain counts."""

from __future__ import annotations

__all__ = ["format_bytes", "format_count", "format_ns", "format_ratio"]


def format_ns(value: float | None) -> str:
    """Format nanoseconds with a unit that keeps 3 to 4 significant digits.

    ``None`` (not measured) formats as ``-``.
    """
    if value is None:
        return "-"
    magnitude = abs(value)
    for limit, divisor, unit in ((1e3, 1.0, "ns"), (1e6, 1e3, "µs"), (1e9, 1e6, "ms")):
        if magnitude < limit:
            return f"{value / divisor:.3g} {unit}" if magnitude >= 1 or unit != "ns" else f"{value:.3f} ns"
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


def format_ratio(value: float | None) -> str:
    """Format a ratio as ``2.31×``; ``None`` formats as ``-``."""
    if value is None:
        return "-"
    return f"{value:.3g}×" if value < 100 else f"{value:,.0f}×"
