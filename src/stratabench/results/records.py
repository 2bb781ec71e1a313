"""Result records: one immutable :class:`CellResult` per measured cell."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from stratabench.datasets.verify import Integrity
from stratabench.metrics import metric
from stratabench.results.stats import PairedRatio, Summary, paired_ratio, round_values, summarize

__all__ = ["CPU_METRIC", "WALL_METRIC", "CellIdentity", "CellResult", "MetricResult", "Retake", "Status",
           "judged_metric_of", "paired_ratio_of"]


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

#: The metric a cell doing its work inside the measuring thread is judged on: its CPU time leaves out the
#: time the host took the CPU away (on a shared machine, most of wall time's spread).
CPU_METRIC = "thread_cpu_ns"
#: The metric a cell that waits (on files, a server, another process) is judged on: its CPU time would leave
#: out the waiting it is measured for.
WALL_METRIC = "wall_ns"

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
        With rounds, the :class:`~stratabench.results.stats.Summary` of the
        per-round values (:attr:`per_round`), so its interval includes the
        machine's drift over the run; without, of the samples themselves.
    rounds
        The round each sample was taken in (parallel to ``samples``);
        ``None`` for a file measured before rounds (format 2), or a metric
        from outside the rounds.
    """

    samples: tuple[float, ...]
    summary: Summary
    rounds: tuple[int, ...] | None = None

    @classmethod
    def of(cls, samples: list[float] | tuple[float, ...], rounds: list[int] | tuple[int, ...] | None = None) -> MetricResult:
        """Samples summarized per round when their rounds are given, else as they are."""
        if rounds is None:
            return cls(tuple(samples), summarize(samples))
        return cls(tuple(samples), summarize(list(round_values(samples, rounds).values())), tuple(rounds))

    @property
    def per_round(self) -> dict[int, float]:
        """Round → that round's median; one pseudo-round (0) holding every sample when rounds are unknown."""
        if self.rounds is None:
            return {0: self.summary.median}
        return round_values(self.samples, self.rounds)

    @property
    def median(self) -> float:
        return self.summary.median


@dataclass(frozen=True)
class Retake:
    """A timed sample set aside because the machine probe around it read slow (:mod:`stratabench.engine.probe`).

    The round's value is the sample taken after it; this one stays in the
    results file so that what was set aside can be seen and counted.

    Attributes
    ----------
    round
        The round it was taken in; ``None`` outside rounds.
    probe_ns
        The slower of the probes before and after it.
    probe_median_ns
        The run's probe median the worker compared that with: the sample was
        set aside because ``probe_ns`` was above ``RETAKE_ABOVE`` times it.
    values
        Its timed metrics per operation (``wall_ns``, ``cpu_ns``, ``thread_cpu_ns``...).
    """

    round: int | None
    probe_ns: float
    probe_median_ns: float
    values: Mapping[str, float]

    @property
    def probe_ratio(self) -> float:
        """How slow the probe read, over the run's probe median: why the sample was set aside."""
        return self.probe_ns / self.probe_median_ns if self.probe_median_ns else float("inf")


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
    probe_ns
        The machine probe's figure around each kept timed sample (the slower
        of the probes before and after it, in ns), in the order of the timed
        metrics' samples; empty when the run did not probe.
    retaken
        The samples set aside because the probe around them read slow, each
        retaken (:class:`Retake`); the timed metrics hold the retakes.
    group
        The cells a report compares this one with share its group; the
        engine measured them back to back in every round, so a ratio between
        two of them is a paired one (:func:`paired_ratio_of`). ``None``: not
        compared, or a file from before rounds.
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
    group: str | None = None
    judged: str | None = None
    probe_ns: tuple[float, ...] = ()
    retaken: tuple[Retake, ...] = ()

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

    @property
    def judged_metric(self) -> str:
        """The metric this cell is judged on: :attr:`judged` when it was measured, else wall time."""
        return self.judged if self.judged is not None and self.judged in self.metrics else WALL_METRIC

    def median(self, name: str) -> float | None:
        """The median of metric ``name``, or ``None`` if it was not measured."""
        result = self.metrics.get(name)
        return None if result is None else result.summary.median

    def summary(self, name: str) -> Summary | None:
        """The summary of metric ``name``, or ``None`` if it was not measured."""
        result = self.metrics.get(name)
        return None if result is None else result.summary


def judged_metric_of(*cells: CellResult) -> str:
    """The metric to compare ``cells`` on: CPU time when every one is judged on it, else wall time.

    A ratio of a cell that waits (a server, a file) to one that does not is
    a question of elapsed time: the waiting is part of the answer.
    """
    return CPU_METRIC if cells and all(cell.judged_metric == CPU_METRIC for cell in cells) else WALL_METRIC


def paired_ratio_of(numerator: CellResult, denominator: CellResult,
                    metric_name: str | None = None) -> PairedRatio | None:
    """``numerator / denominator`` of one metric as the median of per-round ratios, with its interval.

    ``metric_name`` ``None`` (the default) takes the two cells' judged metric
    (:func:`judged_metric_of`). ``None`` when either cell lacks the metric,
    or their rounds never met: one of them comes from a file measured before
    rounds (format 2), for which a report falls back to the ratio of medians
    and says so.
    """
    metric_name = metric_name or judged_metric_of(numerator, denominator)
    first, second = numerator.metrics.get(metric_name), denominator.metrics.get(metric_name)
    if first is None or second is None or first.rounds is None or second.rounds is None:
        return None
    return paired_ratio(first.per_round, second.per_round)
