"""Result records: one immutable :class:`CellResult` per measured cell."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from stratabench.datasets.verify import Integrity
from stratabench.metrics import metric
from stratabench.results.stats import Summary, summarize

__all__ = ["CellIdentity", "CellResult", "MetricResult", "Status"]


class CellIdentity(Protocol):
    """What names a cell (the engine's ``CellSpec`` is one); results never import the engine."""

    @property
    def suite(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def params(self) -> Mapping[str, Any]: ...

    @property
    def language(self) -> str: ...

#: ``ok``: measured and verified. ``failed``: an error, or data that did not
#: verify (metrics may still be present, but must never be ranked).
#: ``unavailable``: something it needs is missing here (package, server, Go).
#: ``unsupported``: the combination cannot work (a value over an item limit).
Status = Literal["ok", "failed", "unavailable", "unsupported"]


@dataclass(frozen=True)
class MetricResult:
    """Raw samples of one metric and their summary.

    Attributes
    ----------
    samples
        Per-operation values, one per sample, in the order taken.
    summary
        Their :class:`~stratabench.results.stats.Summary`.
    """

    samples: tuple[float, ...]
    summary: Summary

    @classmethod
    def of(cls, samples: list[float] | tuple[float, ...]) -> MetricResult:
        return cls(tuple(samples), summarize(samples))

    @property
    def median(self) -> float:
        return self.summary.median


@dataclass(frozen=True)
class CellResult:
    """Everything recorded about one cell.

    Attributes
    ----------
    suite, cell, params, language
        The cell's identity, as in its cell spec.
    status
        See :data:`Status`.
    error
        One line saying why, when ``status`` is not ``ok``; ``None`` otherwise.
    loops
        Operations per timed sample; ``None`` when nothing was timed.
    metrics
        Metric name → samples and summary. Absent means not measured.
    integrity
        The verification outcome; ``None`` when the cell verifies nothing.
    notes
        Facts kept with the result (compression level, library version...).
    duration_s
        How long measuring the cell took, set-up included.
    flags
        Why the cell's timing is unstable, one line each with its figure
        (``stdev 14.2% of the mean (> 10.0%)``); empty when it is not. See
        :func:`stratabench.results.stats.instability`.
    """

    suite: str
    cell: str
    params: Mapping[str, Any]
    language: str
    status: Status
    error: str | None = None
    loops: int | None = None
    metrics: Mapping[str, MetricResult] = field(default_factory=dict)
    integrity: Integrity | None = None
    notes: Mapping[str, Any] = field(default_factory=dict)
    duration_s: float | None = None
    flags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in self.metrics:
            metric(name)  # refuses names missing from the metrics table

    @classmethod
    def failure(cls, spec: CellIdentity, status: Status, error: str, duration_s: float | None = None) -> CellResult:
        """A result for a cell that could not be measured."""
        return cls(spec.suite, spec.name, dict(spec.params), spec.language, status, error, duration_s=duration_s)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def unstable(self) -> bool:
        """Whether the cell is flagged: its median should not be trusted as measured."""
        return bool(self.flags)

    def median(self, name: str) -> float | None:
        """The median of metric ``name``, or ``None`` if it was not measured."""
        result = self.metrics.get(name)
        return None if result is None else result.summary.median

    def summary(self, name: str) -> Summary | None:
        """The summary of metric ``name``, or ``None`` if it was not measured."""
        result = self.metrics.get(name)
        return None if result is None else result.summary
