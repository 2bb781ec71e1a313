"""What ``stratabench advise`` is asked for and what it counts: goals, prices, the cost per million requests.

A **goal** is ``cheapest``, ``fastest``, or limits separated by commas, each
``NAME<VALUE`` with a unit, optionally with ``cheapest`` or ``fastest`` to say
what to choose among the candidates that meet them (``cheapest`` when left
out):

- ``p50``, ``p99``: a read's latency under load (``2ms``, ``500us``, ``1s``);
- ``memory``: the client's peak memory reading every record (``200MB``, ``1.5GB``);
- ``stored``: bytes the store holds for the records (``50MB``);
- ``cost``: dollars per million reads (``0.20``, ``$0.20``).

The **cost per million requests** of a candidate is its client CPU seconds
and server CPU seconds per million reads at a price per vCPU-hour, plus its
bytes on the wire per million reads at a price per GB; bytes stored are
priced per GB-month and shown beside it, since they are paid per month, not
per request. The default prices (:data:`DEFAULT_PRICES`) are public
on-demand cloud list prices, rounded; ``--price NAME=DOLLARS`` sets each.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from stratabench.errors import UsageError
from stratabench.units import format_bytes, format_ns

__all__ = ["DEFAULT_PRICES", "Cost", "Goal", "Limit", "Prices", "cost_per_million", "parse_goal", "parse_prices"]

Measure = Literal["p50", "p99", "memory", "stored", "cost"]
_UNITS: Mapping[Measure, Mapping[str, float]] = {
    "p50": {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9},
    "p99": {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9},
    "memory": {"b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "kib": 2**10, "mib": 2**20, "gib": 2**30},
    "stored": {"b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "kib": 2**10, "mib": 2**20, "gib": 2**30},
    "cost": {"": 1, "$": 1},
}
_EXAMPLE = "for example 'p99<2ms,memory<200MB', 'cheapest' or 'fastest,stored<1GB'"
_LIMIT = re.compile(r"^\s*([a-z0-9]+)\s*<\s*(\$?)\s*([0-9]*\.?[0-9]+)\s*([a-zµ]*)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Limit:
    """``measure < bound``, the bound in ns, bytes or dollars per million reads."""

    measure: Measure
    bound: float

    def __str__(self) -> str:
        if self.measure in ("p50", "p99"):
            return f"{self.measure}<{format_ns(self.bound)}"
        if self.measure == "cost":
            return f"cost<${self.bound:g} per million reads"
        return f"{self.measure}<{format_bytes(self.bound)}"


@dataclass(frozen=True)
class Goal:
    """Limits every recommended candidate must meet, and what to choose among those that do.

    Attributes
    ----------
    limits
        Each a :class:`Limit`; empty for no limit.
    objective
        ``cheapest`` (lowest cost per million reads) or ``fastest`` (lowest p99).
    """

    limits: tuple[Limit, ...] = ()
    objective: Literal["cheapest", "fastest"] = "cheapest"

    def __str__(self) -> str:
        return ", ".join([*map(str, self.limits), self.objective])


def parse_goal(text: str) -> Goal:
    """The goal ``text`` means (see the module docstring); a :class:`UsageError` naming the bad part otherwise."""
    limits: list[Limit] = []
    objective: Literal["cheapest", "fastest"] | None = None
    parts = [part.strip() for part in text.split(",")]
    if not any(parts):
        raise UsageError(f"--goal is empty: {_EXAMPLE}")
    for part in parts:
        word = part.lower()
        if word in ("cheapest", "fastest"):
            if objective is not None and objective != word:
                raise UsageError(f"--goal {text!r}: say cheapest or fastest, not both")
            objective = "cheapest" if word == "cheapest" else "fastest"
            continue
        match = _LIMIT.match(part)
        if match is None:
            raise UsageError(f"--goal {text!r}: cannot read {part!r}; write NAME<VALUE, {_EXAMPLE}")
        name, dollar, number, unit = match.group(1).lower(), match.group(2), float(match.group(3)), match.group(4)
        if name not in _UNITS:
            raise UsageError(f"--goal {text!r}: unknown measure {name!r}; use p50, p99, memory, stored or cost")
        measure: Measure = name  # type: ignore[assignment]
        units = _UNITS[measure]
        unit_key = unit.lower() if measure not in ("p50", "p99") else unit.replace("U", "u").replace("S", "s").lower()
        if measure == "cost":
            unit_key = dollar if not unit else unit
        if unit_key not in units or (measure != "cost" and not unit):
            choices = ", ".join(u for u in units if u) or "dollars ($)"
            raise UsageError(f"--goal {text!r}: {part!r} needs a unit: {choices}")
        if number <= 0:
            raise UsageError(f"--goal {text!r}: {part!r} must be above zero")
        if any(limit.measure == measure for limit in limits):
            raise UsageError(f"--goal {text!r}: {measure} is given twice")
        limits.append(Limit(measure, number * units[unit_key]))
    return Goal(tuple(limits), objective or "cheapest")


@dataclass(frozen=True)
class Prices:
    """Dollars per vCPU-hour (client and server alike), per GB on the wire, per GB stored a month."""

    cpu_hour: float = 0.04
    wire_gb: float = 0.01
    stored_gb_month: float = 0.10

    def describe(self) -> str:
        return (f"${self.cpu_hour:g} per vCPU-hour, ${self.wire_gb:g} per GB on the wire, "
                f"${self.stored_gb_month:g} per GB stored a month")


DEFAULT_PRICES = Prices()
"""A general-purpose cloud vCPU on demand (about $0.04 an hour), traffic between zones of one region ($0.01 per
GB), block storage (about $0.10 per GB-month): rounded public list prices; set yours with ``--price``."""

_PRICE_NAMES = {"cpu_hour": "cpu_hour", "wire_gb": "wire_gb", "stored_gb_month": "stored_gb_month"}


def parse_prices(pairs: list[str] | None) -> Prices:
    """``--price NAME=DOLLARS`` pairs over :data:`DEFAULT_PRICES`; a one-line error for a bad one."""
    prices = DEFAULT_PRICES
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        name = name.strip()
        if not sep or name not in _PRICE_NAMES:
            raise UsageError(f"--price {pair!r}: expected NAME=DOLLARS with NAME one of {', '.join(_PRICE_NAMES)}")
        try:
            dollars = float(value.strip().removeprefix("$"))
        except ValueError:
            raise UsageError(f"--price {pair!r}: {value.strip()!r} is not a number of dollars") from None
        if not dollars >= 0 or dollars == float("inf"):
            raise UsageError(f"--price {pair!r}: a price is zero or more dollars")
        prices = replace(prices, **{name: dollars})
    return prices


@dataclass(frozen=True)
class Cost:
    """What a million reads cost a candidate, by part, and what its records cost to keep a month.

    Attributes
    ----------
    client_cpu_s, server_cpu_s
        CPU seconds per million reads (server: ``None`` when not measured, an embedded store's is the client's).
    wire_bytes
        Bytes on the wire per million reads (the stored value of one record; protocol overhead left out).
    stored_bytes
        Bytes the store holds for every record.
    prices
        The prices used.
    """

    client_cpu_s: float
    server_cpu_s: float | None
    wire_bytes: float
    stored_bytes: float
    prices: Prices = field(default=DEFAULT_PRICES)

    @property
    def cpu_dollars(self) -> float:
        return (self.client_cpu_s + (self.server_cpu_s or 0.0)) / 3600 * self.prices.cpu_hour

    @property
    def wire_dollars(self) -> float:
        return self.wire_bytes / 1e9 * self.prices.wire_gb

    @property
    def per_million(self) -> float:
        """Dollars per million reads: CPU (client and server) and the wire."""
        return self.cpu_dollars + self.wire_dollars

    @property
    def stored_per_month(self) -> float:
        """Dollars a month to keep the records stored."""
        return self.stored_bytes / 1e9 * self.prices.stored_gb_month


def cost_per_million(*, client_cpu_ns: float, server_cpu_ns: float | None, value_bytes: float, stored_bytes: float,
                     prices: Prices = DEFAULT_PRICES) -> Cost:
    """The :class:`Cost` of a candidate from its per-read CPU (ns), one stored value's bytes, and all stored."""
    return Cost(client_cpu_ns * 1e6 / 1e9, None if server_cpu_ns is None else server_cpu_ns * 1e6 / 1e9,
                value_bytes * 1e6, stored_bytes, prices)
