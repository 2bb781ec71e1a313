"""The rate sweep: raise the open loop's rate until latency or errors pass a limit, and find the knee.

A closed loop says how fast the server goes when clients wait for it; it
cannot say how long a request waits when they do not. The sweep runs the
same configuration as an open loop at rising rates and stops at the first
rate that

- pushes p99 latency over :attr:`SweepLimits.p99_ns`,
- fails more than :attr:`SweepLimits.error_fraction` of its requests,
- falls behind its schedule (the system cannot sustain that rate), or
- fails outright (the server died).

That rate is kept as the last point. The **knee** is the highest rate
before it: the most load the system takes with its tail latency within the
limit. Rates are tried from low to high; :func:`default_rates` spreads them
around a closed loop's throughput, where the knee usually is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from stratabench.errors import UsageError
from stratabench.load.run import LoadResult, LoadSpec, run_load
from stratabench.units import format_ns

__all__ = ["SweepLimits", "SweepPoint", "SweepResult", "default_rates", "sweep"]

_FRACTIONS_OF_PEAK = (0.25, 0.5, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0)


@dataclass(frozen=True)
class SweepLimits:
    """Where the sweep stops.

    Attributes
    ----------
    p99_ns
        Highest acceptable p99 latency (default 10 ms).
    error_fraction
        Highest acceptable share of failed requests (default 1%).
    """

    p99_ns: float = 10_000_000
    error_fraction: float = 0.01

    def __post_init__(self) -> None:
        if not self.p99_ns > 0:
            raise UsageError(f"the sweep's p99 limit must be a positive time, not {self.p99_ns:g} ns")
        if not 0 <= self.error_fraction < 1:
            raise UsageError(f"the sweep's error limit must be a fraction from 0 to 1, not {self.error_fraction:g}")

    def exceeded(self, result: LoadResult) -> str | None:
        """Why ``result`` is past the limits, in words; ``None`` when it is within them."""
        if result.error is not None:
            return result.error
        if result.behind_schedule:
            return "the open loop fell behind its schedule"
        if result.error_fraction > self.error_fraction:
            return f"{result.error_fraction:.1%} of requests failed, over the {self.error_fraction:.1%} limit"
        p99 = result.latency.p99_ns
        if p99 is not None and p99 > self.p99_ns:
            return f"p99 {format_ns(p99)} over the {format_ns(self.p99_ns)} limit"
        return None


@dataclass(frozen=True)
class SweepPoint:
    """One rate of the sweep: its result, and why it passed a limit (``None`` if it did not)."""

    rate_per_s: float
    result: LoadResult
    over_limit: str | None


@dataclass(frozen=True)
class SweepResult:
    """Every rate tried, in order, and the knee.

    Attributes
    ----------
    points
        The rates tried, lowest first; the last one passed a limit unless every rate stayed within them.
    knee
        The highest rate within the limits; ``None`` when even the first was past them.
    stopped
        Why the last point passed a limit, or ``None`` when every rate stayed within them.
    """

    points: tuple[SweepPoint, ...]
    knee: SweepPoint | None
    stopped: str | None


def default_rates(peak_ops_per_s: float) -> tuple[float, ...]:
    """Rates from a quarter to twice ``peak_ops_per_s`` (a closed loop's throughput), rounded to 2 digits."""
    if not peak_ops_per_s > 0:
        raise UsageError("the closed loop answered no request, so there is no rate to sweep around; check the store")
    return tuple(float(f"{peak_ops_per_s * f:.2g}") for f in _FRACTIONS_OF_PEAK)


def sweep(base: LoadSpec, rates: Sequence[float], limits: SweepLimits | None = None, *,
          measure: Callable[[LoadSpec], LoadResult] = run_load) -> SweepResult:
    """Run ``base`` as an open loop at each rate, lowest first, until one passes ``limits``.

    Parameters
    ----------
    base
        The configuration; its rate is replaced by each of ``rates``.
    rates
        Requests per second, in any order.
    limits
        Where to stop; :class:`SweepLimits` defaults when ``None``.
    measure
        Runs one configuration: :func:`~stratabench.load.run.run_load` on
        local processes by default; pass one that uses a cluster, or that
        also writes each result as it comes.

    Raises
    ------
    UsageError
        No rates, or a rate that is not positive (before anything runs).
    """
    if not rates:
        raise UsageError("a sweep needs at least one rate")
    ordered = sorted(float(rate) for rate in rates)
    specs = [replace(base, rate_per_s=rate) for rate in ordered]  # each refuses a rate that is not positive
    limits = limits or SweepLimits()
    points: list[SweepPoint] = []
    for rate, spec in zip(ordered, specs, strict=True):
        result = measure(spec)
        over = limits.exceeded(result)
        points.append(SweepPoint(rate, result, over))
        if over is not None:
            break
    within = [p for p in points if p.over_limit is None]
    return SweepResult(tuple(points), within[-1] if within else None, points[-1].over_limit)
