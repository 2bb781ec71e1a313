"""When a cell has sampled enough: the stopping rule of adaptive sampling.

A fixed sample count wastes time on stable cells and leaves noisy ones with
an interval wider than it should be. The rule here samples each cell until
the answer is known, as pyperf's advice and benchstat's intervals suggest:

1. never fewer than the floor (``min_samples``: six, the fewest whose
   order-statistic interval of the median reaches 95%), unless the samples
   already took ``max_sample_ns`` (a cell of multi-second operations), and
   then never fewer than three;
2. then stop as soon as the median's interval is within ``target`` of the
   median (relative half-width);
3. or when the cell's sampling budget is spent, or the sample cap reached,
   or when what the budget (or the cap) still allows could not narrow the
   interval (:func:`narrowing_count`: from six samples to eight the
   interval is the whole range, so a seventh and eighth can only widen
   it): the target was missed, and the cell is flagged unstable with its figure.

``--samples N`` fixes the count: exactly N, whatever the interval says
(still bounded by ``max_sample_ns``).

In a run the rule counts rounds, not samples (:mod:`stratabench.engine.rounds`):
it is given each round's median, so "the interval is tight enough" means
tight across the run's rounds, the machine's drift included; within one
round a worker takes exactly its :class:`RoundPlan`'s samples.

The run's allowance (:class:`Allowance`)
----------------------------------------
A cell budget pays for the floor and little more: in a run a round costs a
whole worker (about 60 ms), so 0.3 s stops every cell at six rounds, whose
interval is the whole range of six values, and one slow round of the
machine flags the cell. A larger budget for every cell would spend rounds
on the cells that already met the target. So the rounds beyond a cell's
budget come from one allowance shared by the run, and go only where they
can change the answer (as pyperf and Kalibera & Jones advise: repeat where
the variation is, not everywhere):

* a cell that met its target stops, as before; a cell whose budget is spent
  while it misses the target *asks* for rounds up to the fewest narrowing
  count (:func:`narrowing_count`: 9, 12, 15...) that could meet the target,
  up to ``allowance_rounds`` (12 by default; its next count in any case):
  the fewest whose interval, if the new rounds all landed among the current
  middle values (:func:`best_half_width`), would be within the target
  (:func:`meeting_count`). The machine's noise is spiky: in a flagged cell
  most rounds sit within 2% of the median and one or two are 1.2-1.9x.
  Two far rounds at one end of six (1.43 and 1.2 among values near 1.0)
  stay inside nine rounds' interval (the 2nd to the 8th value) and could
  leave twelve's (the 3rd to the 10th); asking only for its next count, such
  a cell asked for nothing and was flagged at six (30 and 37 of the 331
  Python cells of two default runs; resampling those runs' own rounds, 54-61%
  of such cells would meet the target at twelve, against 71-74% of the cells
  asking for nine at nine). Asked for after the cheaper asks for nine, twelve
  rounds fit in the allowance only when it has room left; and on a machine
  busy enough that a fifth of all rounds are far, they do not pay (two runs
  at 10% under a load of 3-5: 20 of 78 and 38 of 124 such cells got twelve
  rounds, none met the target). A count whose bounding ranks the
  values so far do not hold (fifteen's 4th from six values) is no test, so
  it is not asked for. A cell that no count up to the cap could help (a
  spread among its middle values) asks for nothing: rounds cannot help it, and it is flagged at once;
* after each round the asks are granted cheapest first (the rounds asked
  times a visit's cost: the cell's worker's mean round beyond its first,
  and what the last round spent per visit beyond the workers): each grant
  buys the same thing, one cell's chance at a narrower interval, so the
  cheapest first give the most cells that chance; an ask that does not
  fit what is left ends the granting for that round;
* the asks granted cost at most a share (``run_allowance``, 10% by
  default) of the rounds' time (wall clock, each round from its start to
  its last visit's end, not the sliced suites' slices between rounds,
  which buy their own extra slices) until the first ask, that is
  of the floor of rounds, fixed then so that it does not grow with the
  rounds it pays for; the rounds it pays for add about that share to the
  run's time. The cost is an estimate: a round of a few cells still pays
  the round's fixed costs (its zygotes), which the last, larger round
  spread over more visits (in a run on a busy machine, 10% of the floor's
  201 s paid for 24.6 s of later rounds). A cell still missing its target
  when its grant is used and no other fits is flagged with its figure, as
  before.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from stratabench.options import EngineOptions
from stratabench.results.stats import median_ci_ranks, summarize

__all__ = ["PAIRED_ROUNDS_CAP", "ROBUST_ROUNDS", "Allowance", "Ask", "RoundPlan", "StoppingRule", "Stop",
           "best_half_width", "deciding_count", "meeting_count", "narrowing_count"]

#: Fewest samples kept even when one sample outlasts the time cap.
MIN_SAMPLES_EVER = 3

#: The fewest rounds whose 95% interval of the median leaves out the highest and the lowest value (nine; from
#: six to eight it is the whole range). A ratio of two cells in a verdict, from six rounds, swung from met to too
#: close to call between two runs on one disturbed round (lazy read 0 ÷ raw parse: 1.14× [1.11-1.83×]); a suite
#: gives its verdict cells this floor (:attr:`~stratabench.engine.operation.CellSpec.min_rounds`).
ROBUST_ROUNDS = 9

#: The most rounds a pair whose verdict is too close to call takes (:func:`deciding_count`): a narrowing count
#: (its interval leaves out the five far ratios at each end), about twice the robust floor. A ratio within a few
#: percent of its bound (lazy read 1 ÷ raw parse: 1.06–1.11× against 1.2×) needs an interval that narrow.
PAIRED_ROUNDS_CAP = 20

#: Why sampling stopped: ``target`` reached, ``budget`` spent or sample ``cap`` reached before it
#: (both flag the cell), ``fixed`` count taken, ``time cap`` (``max_sample_ns``) hit.
Reason = Literal["target", "budget", "cap", "fixed", "time cap"]


@dataclass(frozen=True)
class Stop:
    """The end of a cell's sampling.

    Attributes
    ----------
    reason
        See :data:`Reason`.
    target
        The relative half-width aimed at (``None`` for a fixed count).
    budget_s
        The cell's sampling budget in seconds (``None`` for a fixed count).
    """

    reason: Reason
    target: float | None = None
    budget_s: float | None = None

    @property
    def target_missed(self) -> bool:
        """Adaptive sampling stopped without reaching its target."""
        return self.reason in ("budget", "cap", "time cap") and self.target is not None


@dataclass(frozen=True)
class StoppingRule:
    """The rule of the module docstring, for one cell's options."""

    options: EngineOptions

    def stop(self, samples: Sequence[float], spent_ns: int, sampled_ns: int | None = None) -> Stop | None:
        """Whether to stop after ``samples`` (per-operation values) that took ``spent_ns`` in all; ``None`` goes on.

        ``sampled_ns``, when the budget counts more than the timed samples (a
        round's whole worker), is the samples' own time, which the
        ``max_sample_ns`` cap counts.
        """
        options = self.options
        n = len(samples)
        adaptive = options.samples is None
        target = options.target if adaptive else None
        budget_s = options.cell_budget_ns / 1e9 if adaptive else None

        def stopped(reason: Reason) -> Stop:
            return Stop(reason, target, budget_s)

        if n >= MIN_SAMPLES_EVER and (spent_ns if sampled_ns is None else sampled_ns) >= options.max_sample_ns:
            return stopped("target" if adaptive and n >= options.min_samples and self.met(samples) else "time cap")
        if not adaptive:
            return stopped("fixed") if n >= (options.samples or 0) else None
        if n < options.min_samples:
            return None
        if self.met(samples):
            return stopped("target")
        if n >= options.max_samples:
            return stopped("cap")
        if spent_ns >= options.cell_budget_ns:
            return stopped("budget")
        narrower = narrowing_count(n)
        if narrower > options.max_samples:
            return stopped("cap")
        if spent_ns / n * narrower > options.cell_budget_ns:
            # The samples the budget still pays for could not drop another value from either end of the
            # interval (six to eight samples all have the whole range as theirs): they would only cost.
            return stopped("budget")
        return None

    def met(self, samples: Sequence[float]) -> bool:
        """Whether the median's interval of ``samples`` is within the target."""
        return summarize(samples).relative_half_width <= self.options.target


def narrowing_count(n: int) -> int:
    """The fewest samples above ``n`` whose median interval leaves out one more order statistic at each end.

    The order-statistic interval of the median narrows in steps: from six
    samples to eight it is the whole range, from nine to eleven the second
    to the second-last, from twelve the third. A sample that does not reach
    the next step can only widen the interval, never bring it within the
    target.
    """
    low = median_ci_ranks(n)[0]
    more = n + 1
    while median_ci_ranks(more)[0] <= low:
        more += 1
    return more


def best_half_width(values: Sequence[float], count: int) -> float:
    """The narrowest relative half-width the median's interval of ``values`` could have at ``count`` values.

    With ``m`` values the interval runs from the ``l``-th smallest to the
    ``l``-th largest (:func:`~stratabench.results.stats.median_ci_ranks`).
    Adding values to the current ``n`` can only move the ``l``-th smallest
    down to or below the current ``l``-th smallest, and the ``l``-th largest
    up, so the interval at ``count`` holds the current values of those ranks
    (:func:`_held`): their half-width over the current median is the best
    ``count`` can do, reached if every new value lands among the middle ones.
    """
    held = _held(values, count)
    if held is None or held[0] >= held[1]:  # the count's ranks meet in the middle: its interval could be one value
        return 0.0
    median = summarize(values).median
    width = (held[1] - held[0]) / 2
    return 0.0 if width == 0 else math.inf if median == 0 else width / abs(median)


def meeting_count(values: Sequence[float], target: float, cap: int) -> int | None:
    """The fewest narrowing count, up to ``cap``, whose median interval of ``values`` could be within ``target``.

    The next narrowing count (:func:`narrowing_count`) is always tried, even
    above ``cap``; a later one only while the values so far hold both ranks
    that bound its interval (from six values, twelve's third smallest and
    third largest, but not fifteen's fourth: any spread of six could still
    meet the target at fifteen, so asking for it would be no test).
    ``None``: no count up to the cap could meet the target
    (:func:`best_half_width`: the middle values themselves are spread wider),
    so rounds would only cost.
    """
    following = narrowing_count(len(values))

    def could_meet(count: int) -> bool:
        if count > following and 2 * median_ci_ranks(count)[0] > len(values):
            return False
        return best_half_width(values, count) <= target

    return _fewest_count(len(values), cap, could_meet)


def _held(values: Sequence[float], count: int) -> tuple[float, float] | None:
    """The current values of the ranks that bound the median's interval at ``count`` values (``None``: too few).

    However the values from here to ``count`` fall, that interval's low end
    is at most the first, its high end at least the second (see
    :func:`best_half_width`).
    """
    ordered = sorted(values)
    low = median_ci_ranks(count)[0]
    if low > len(ordered):
        return None
    return ordered[low - 1], ordered[len(ordered) - low]


def deciding_count(ratios: Sequence[float], bound: float, cap: int) -> int | None:
    """The fewest rounds, at most ``cap``, whose interval of the median of ``ratios`` could clear ``bound``.

    ``ratios`` are a pair's per-round ratios so far, whose interval
    straddles ``bound`` (a verdict too close to call). Only a narrowing
    count (:func:`narrowing_count`) can exclude more of the far ratios, and
    it can clear the bound only if the values its interval must hold
    (:func:`_held`) lie on one side of it; ``None``: no count up to the cap
    could, so more rounds would only cost.
    """

    def could_clear(count: int) -> bool:
        held = _held(ratios, count)
        return held is None or held[0] > bound or held[1] < bound

    found = _fewest_count(len(ratios), cap, could_clear)
    return None if found is None or found > cap else found


def _fewest_count(n: int, cap: int, could: Callable[[int], bool]) -> int | None:
    """The fewest narrowing count above ``n`` (the next one even above ``cap``, the rest up to ``cap``) that ``could``
    reach its goal, or ``None``: only a narrowing count leaves out more far values, so no other count is worth its
    rounds."""
    count = narrowing_count(n)
    last = max(cap, count)
    while count <= last:
        if could(count):
            return count
        count = narrowing_count(count)
    return None


@dataclass(frozen=True)
class Ask:
    """A cell's request for rounds beyond its budget: up to ``rounds`` in all, at an estimated ``cost_ns``."""

    key: str
    rounds: int
    cost_ns: float


@dataclass
class Allowance:
    """The run's allowance for rounds beyond the cells' budgets (the module docstring's second part).

    Parameters
    ----------
    share
        The share of the rounds' time until the first ask that granted
        rounds may take in all (``EngineOptions.run_allowance``); 0 grants nothing.
    total_ns
        The allowance, fixed at the first ask; ``None`` until then.
    granted_ns
        The estimated cost of every ask granted so far.
    """

    share: float
    total_ns: float | None = None
    granted_ns: float = 0.0

    def grant(self, asks: Iterable[Ask], spent_ns: float) -> list[Ask]:
        """The asks granted, cheapest first, while their costs fit the allowance.

        ``spent_ns`` is the rounds' time so far; the first call with an ask
        fixes the allowance at ``share`` of it.
        """
        asks = list(asks)
        if asks and self.total_ns is None:
            self.total_ns = self.share * spent_ns
        left = (self.total_ns or 0.0) - self.granted_ns
        granted = []
        for ask in sorted(asks, key=lambda ask: (ask.cost_ns, ask.key)):
            if ask.cost_ns > left:
                break  # sorted by cost: no later ask fits either
            left -= ask.cost_ns
            self.granted_ns += ask.cost_ns
            granted.append(ask)
        return granted


@dataclass(frozen=True)
class RoundPlan:
    """What one cell's worker does in one round.

    Attributes
    ----------
    number
        The round, from 0.
    loops
        Operations per sample, from the first round's calibration; ``None``
        calibrates (the first round).
    samples
        Timed samples to take in this round.
    first
        This is the cell's first round: it also traces memory and verifies.
    probe_median_ns
        The run's machine-probe median: each sample is taken between two
        probes and retaken when they read slow
        (:mod:`stratabench.engine.probe`); ``None`` takes every sample once, unprobed.
    """

    number: int
    loops: int | None
    samples: int
    first: bool
    probe_median_ns: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "loops": self.loops, "samples": self.samples, "first": self.first,
                "probe_median_ns": self.probe_median_ns}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RoundPlan:
        return cls(int(data["number"]), data.get("loops"), int(data["samples"]), bool(data["first"]),
                   data.get("probe_median_ns"))
