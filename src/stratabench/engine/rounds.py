"""Rounds: the unit of repetition is a fresh worker later in the run, not a sample.

A machine's speed swings over seconds and minutes. When every sample of a
cell comes from one window of a fraction of a second, those swings are
constant inside the cell, invisible to its interval, and land *between*
cells, in every ratio of two of them. So a run measures in rounds
(Kalibera & Jones, "Rigorous benchmarking in reasonable time"):

1. In each round, every cell still sampling gets a fresh worker and takes
   its share of samples (:class:`RoundPlan`): the first round calibrates
   the loop count, traces memory and verifies; later ones reuse the loop
   count and only time.
2. The order of a round is shuffled, seeded and recorded
   (:func:`round_order`), so no cell always follows the same neighbour.
   Cells that a report compares share a group and run back to back, the
   group's order reversed every other round (ABBA), so their ratio is
   taken within one moment of the machine.
3. After each round the stopping rule of :mod:`stratabench.engine.sampling`
   judges each cell on the *per-round* values (each round's median) of its
   judged metric (the thread's CPU time for work inside the worker, wall
   time for a cell that waits on files or servers:
   :attr:`~stratabench.engine.operation.Operation.judged_metric`), so its
   interval includes the machine's drift over the run. Each cell drops out
   of later rounds once it has stopped, a failed cell at once; the rest of
   its group stays back to back. Every member takes the floor of rounds,
   so any two of a group share at least that many pairs.
4. A cell that would stop because its budget is spent while it misses its
   target first asks the run's allowance for rounds up to the fewest
   narrower count that could meet it, 12 at most unless its next is more
   (:func:`~stratabench.engine.sampling.meeting_count`,
   :class:`~stratabench.engine.sampling.Allowance`): the
   asks of a round are granted together, cheapest first, so the rounds
   beyond the budgets go to the cells whose answer they can change, and
   a stable cell never gets more.
5. A verdict on two cells (a cell's
   :attr:`~stratabench.engine.operation.CellSpec.bounds`: this cell ÷ that
   one against a bound) is too close to call while its paired ratio's
   interval straddles the bound, and a few percent of margin needs more
   than the floor's nine rounds to clear. When either of its cells would
   stop with the verdict undecided, both go on to the fewest rounds that
   could decide it (:func:`~stratabench.engine.sampling.deciding_count`, up
   to :data:`~stratabench.engine.sampling.PAIRED_ROUNDS_CAP`), checked
   again after each round with the report's own ratio and test; a decided
   verdict gets nothing more. These rounds come from an allowance of their
   own, the same share of the rounds' time as the cells', so that neither
   starves the other.

Both allowances are shares of the rounds' own time, each round from its
start (its zygotes) to its last visit's end: not of the time between rounds,
where the run measures its reference workload and the sliced suites take
their slices (:mod:`stratabench.engine.slices`: a sliced suite that takes
slices beyond its floor takes them from an allowance of its own, a share of
the slices' time).

Each worker takes its samples between two short machine probes and
retakes a sample the probes say the machine slowed
(:mod:`stratabench.engine.probe`); the run keeps the probe's median over
every figure its workers reported and hands it to each visit in its plan.

The scheduling here knows nothing of how a unit is measured: the run hands
:func:`run_rounds` a function that measures one cell for one round (a
forked worker in a run, an operation on a fake clock in a test), and
:func:`round_order` takes any units, so ``stratabench ab`` can schedule the
two sides of a comparison with it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from stratabench.engine.clock import SYSTEM_CLOCK, Clock
from stratabench.engine.operation import CellSpec, PairedBound
from stratabench.engine.probe import ProbeMedian, machine_probe, reference_loop
from stratabench.engine.sampling import (PAIRED_ROUNDS_CAP, Allowance, Ask, RoundPlan, Stop, StoppingRule,
                                          deciding_count, meeting_count)
from stratabench.options import EngineOptions
from stratabench.results.records import WALL_METRIC, CellResult, MetricResult, Retake, judged_metric_of, paired_ratio_of
from stratabench.results.stats import instability, round_ratios, round_values

__all__ = ["TIMED_METRICS", "CellRounds", "Round", "RoundPlan", "cell_key", "decided", "reference_ns", "round_order",
           "run_rounds"]

#: Metrics every round measures; the others (memory, size, a suite's extras) come from the first round only.
TIMED_METRICS = ("wall_ns", "cpu_ns", "thread_cpu_ns", "server_cpu_ns")

Unit = TypeVar("Unit")


def round_order(units: Sequence[Unit], number: int, seed: int,
                group_of: Callable[[Unit], Hashable | None] = lambda unit: None) -> list[Unit]:
    """The order of round ``number``: blocks shuffled by ``(seed, number)``, each group's units adjacent.

    A group's units keep their given order in even rounds and reverse it in
    odd ones (A B, then B A: ABBA over two rounds), so a slow or fast
    stretch of the machine favours neither side on average. A unit whose
    group is ``None`` is a block of its own.
    """
    blocks: dict[Hashable, list[Unit]] = {}
    for index, unit in enumerate(units):
        group = group_of(unit)
        blocks.setdefault(("group", group) if group is not None else ("unit", index), []).append(unit)
    ordered = list(blocks.values())
    random.Random(f"{seed}:{number}").shuffle(ordered)
    return [unit for block in ordered for unit in (reversed(block) if number % 2 else block)]


def cell_key(spec: CellSpec) -> str:
    """A cell's key in a run's rounds (``suite/name``): what its asks and a verdict's pair name it by."""
    return f"{spec.suite}/{spec.name}"


#: The reference workload: a fixed pure-Python loop, the same on every machine and in every round.
_REFERENCE_LOOPS = 20_000


def reference_ns(clock: Clock = SYSTEM_CLOCK, repeats: int = 3) -> float:
    """The time of the reference workload now (the fastest of ``repeats``, about 1 ms each): the machine's speed.

    Measured in the parent between rounds; its spread over a run says how
    much the machine itself moved while the cells were measured.
    """
    times = []
    for _ in range(repeats):
        start = clock.wall_ns()
        reference_loop(_REFERENCE_LOOPS)
        times.append(clock.wall_ns() - start)
    return float(min(times))


@dataclass
class CellRounds:
    """One cell's rounds so far, merged into one result.

    Parameters
    ----------
    spec
        The cell.
    options
        The run's engine options: the stopping rule's, counted in rounds
        (``min_samples`` rounds at least, ``max_samples`` at most, or
        exactly ``samples`` with a fixed count).
    """

    spec: CellSpec
    options: EngineOptions
    first: CellResult | None = None
    failure: CellResult | None = None
    loops: int | None = None
    samples: dict[str, list[float]] = field(default_factory=dict)
    rounds: dict[str, list[int]] = field(default_factory=dict)
    sampled_ns: int = 0
    spent_ns: int = 0
    duration_s: float = 0.0
    measured: int = 0
    granted: int = 0
    first_ns: int = 0
    probe_ns: list[float] = field(default_factory=list)
    retaken: list[Retake] = field(default_factory=list)

    @property
    def rule(self) -> StoppingRule:
        return StoppingRule(self.options)

    def plan(self, number: int, probe_median_ns: float | None = None) -> RoundPlan:
        """The next round of this cell: calibrate first, then the calibrated loops; one sample a round with a fixed
        count; its samples probed against ``probe_median_ns`` (:mod:`stratabench.engine.probe`) when given."""
        options = self.options
        if options.samples is not None:
            samples = 1
        elif self.first is None or self.loops is None:
            samples = options.round_samples
        else:
            # A slow operation takes one sample a round, so its floor of rounds fits the cell's budget.
            per_sample = (self.sampled_ns / max(1, len(self.samples.get("wall_ns", ())))) or 0
            floor_share = options.cell_budget_ns / max(1, options.min_samples)
            samples = 1 if per_sample * options.round_samples > floor_share else options.round_samples
        return RoundPlan(number, self.loops, samples, self.first is None, probe_median_ns)

    def add(self, result: CellResult, plan: RoundPlan) -> None:
        """Merge one round's result; a failed round ends the cell with its reason."""
        self.measured += 1
        self.duration_s += result.duration_s or 0.0
        # The budget counts the worker's whole round (its start, preparation, warm-up and samples), not the
        # samples alone: each round costs that, so a budget of samples would buy a fast cell dozens of rounds.
        self.spent_ns += int((result.duration_s or 0.0) * 1e9)
        if self.measured == 1:
            self.first_ns = self.spent_ns
        if not result.ok:  # an error, or data that did not verify: no later round can make it good
            self.failure = result
            return
        if self.first is None:
            self.first = result
            self.loops = result.loops
        for name in TIMED_METRICS:
            measured = result.metrics.get(name)
            if measured is None:
                continue
            self.samples.setdefault(name, []).extend(measured.samples)
            self.rounds.setdefault(name, []).extend([plan.number] * len(measured.samples))
        self.probe_ns.extend(result.probe_ns)
        self.retaken.extend(result.retaken)
        wall = result.metrics.get("wall_ns")
        if wall is not None and result.loops:
            self.sampled_ns += int(sum(wall.samples) * result.loops)

    @property
    def judged(self) -> str:
        """The metric this cell is judged on, as its first round said (wall time until then)."""
        return WALL_METRIC if self.first is None else self.first.judged_metric

    def per_round(self) -> list[float]:
        """The per-round values of the judged metric so far, in round order."""
        judged = self.judged
        if judged not in self.samples:
            return []
        return list(round_values(self.samples[judged], self.rounds[judged]).values())

    def stop(self) -> Stop | None:
        """Whether this cell has sampled enough (``None``: it wants another round); failed cells have."""
        if self.failure is not None:
            return Stop("fixed")
        if self.first is None:
            return None
        values = self.per_round()
        if not values:  # nothing timed (a cell measured once by construction)
            return Stop("fixed")
        stop = self.rule.stop(values, self.spent_ns, self.sampled_ns)
        if stop is not None and stop.reason == "budget" and len(values) < self.granted:
            return None  # the run's allowance pays for these rounds
        return stop

    def ask(self, stop: Stop | None, key: str, overhead_ns: float = 0.0) -> Ask | None:
        """The rounds this cell asks of the run's allowance, stopping for ``stop``; ``None`` if it asks none.

        Only a cell stopped by its budget while it misses the target asks,
        and only for the fewest narrower count, up to the options'
        ``allowance_rounds`` (its next one at least) and the cap, that could
        meet the target (:func:`~stratabench.engine.sampling.meeting_count`).
        Its cost is the rounds asked times a visit's (:meth:`visit_ns`).
        """
        if stop is None or stop.reason != "budget":
            return None
        values = self.per_round()
        options = self.options
        rounds = meeting_count(values, options.target, min(options.allowance_rounds, options.max_samples))
        if rounds is None or rounds > options.max_samples:
            return None
        return Ask(key, rounds, (rounds - len(values)) * self.visit_ns(overhead_ns))

    def visit_ns(self, overhead_ns: float) -> float:
        """What one more round of this cell costs: its worker's mean round after the first (the first also
        calibrates, traces memory and verifies), and ``overhead_ns``, what the last round spent on each visit
        beyond its worker."""
        later = self.spent_ns - self.first_ns
        return (later / (self.measured - 1) if self.measured > 1 else self.spent_ns) + overhead_ns

    def result(self) -> CellResult:
        """The merged record: timed metrics from every round (with their rounds), the rest from the first.

        Its flag, if any, is of the judged metric's per-round values against
        the run's target, whatever stopped the sampling (a fixed count
        included): one line naming the metric, the interval's half-width, the
        target and the rounds.
        """
        if self.failure is not None or self.first is None:
            failure = self.failure or CellResult.failure(self.spec, "failed", "interrupted before its first round ended")
            return replace(failure, duration_s=self.duration_s, group=self.spec.group)
        metrics = dict(self.first.metrics)
        for name, values in self.samples.items():
            metrics[name] = MetricResult.of(values, self.rounds[name])
        stop = self.stop() or Stop("budget", self.options.target, self.options.cell_budget_ns / 1e9)
        judged = metrics.get(self.judged)
        flags = self.first.flags if judged is None else tuple(instability(
            judged.summary, target=self.options.target, target_missed=stop.target_missed,
            budget_s=stop.budget_s if stop.reason == "budget" else None, counted="rounds", metric=self.judged))
        return replace(self.first, metrics=metrics, flags=flags, duration_s=self.duration_s, group=self.spec.group,
                       probe_ns=tuple(self.probe_ns), retaken=tuple(self.retaken))


@dataclass(frozen=True)
class Round:
    """One finished round: its number, the cells (``suite/cell``) in the order measured, the reference workload's time,
    and when it ended (seconds since the first round began)."""

    number: int
    order: tuple[str, ...]
    reference_ns: float | None
    at_s: float


def decided(numerator: CellResult, denominator: CellResult, bound: PairedBound) -> bool:
    """Whether the verdict ``numerator ÷ denominator`` against ``bound`` is decided: the paired ratio's interval
    lies wholly on one side of it, at the rounds' clear level.

    The report's ratio (:func:`~stratabench.results.records.paired_ratio_of`)
    and its test (:meth:`~stratabench.results.stats.PairedRatio.clear`), so
    that the rounds stop where the report's verdict stops being too close to
    call. A pair with no ratio (a cell failed or lacks the metric) is decided:
    no round can give it one.
    """
    ratio = paired_ratio_of(numerator, denominator, bound.metric)
    return ratio is None or ratio.clear(bound.bound)


@dataclass
class _Pair:
    """A verdict on two cells of the run (a :class:`~stratabench.engine.operation.PairedBound`) and the rounds
    granted so far to decide it (pairs of rounds in all; 0: none beyond the cells' own)."""

    numerator: str
    denominator: str
    bound: PairedBound
    granted: int = 0

    @property
    def key(self) -> str:
        return f"{self.numerator} ÷ {self.denominator} vs {self.bound.bound:g}"

    def wanted(self, states: Mapping[str, CellRounds], stops: Mapping[str, Stop | None]) -> tuple[int, int] | None:
        """The pairs of rounds that could decide this verdict, and the pairs so far; ``None``: no more rounds.

        None while both cells go on anyway, when either took a fixed count or
        failed, when the verdict is decided (the paired ratio's interval
        clears the bound: the report's own test, on the report's own ratio,
        :func:`~stratabench.results.records.paired_ratio_of`), and when no
        count up to :data:`~stratabench.engine.sampling.PAIRED_ROUNDS_CAP`
        (and the run's cap) could decide it
        (:func:`~stratabench.engine.sampling.deciding_count`).
        """
        sides = (self.numerator, self.denominator)
        if all(stops[name] is None for name in sides) or any(
                (stop := stops[name]) is not None and stop.reason == "fixed" for name in sides):
            return None
        numerator, denominator = (states[name].result() for name in sides)
        if decided(numerator, denominator, self.bound):
            return None
        metric = self.bound.metric or judged_metric_of(numerator, denominator)
        ratios = round_ratios(numerator.metrics[metric].per_round, denominator.metrics[metric].per_round)
        cap = min(PAIRED_ROUNDS_CAP, *(states[name].options.max_samples for name in sides))
        count = deciding_count(ratios, self.bound.bound, cap)
        return None if count is None else (count, len(ratios))


def _pairs(states: Mapping[str, CellRounds]) -> list[_Pair]:
    """The verdicts the cells declare (:attr:`~stratabench.engine.operation.CellSpec.bounds`) whose two cells
    are both in the run."""
    return [_Pair(name, denominator, bound) for name, state in states.items() for bound in state.spec.bounds
            if (denominator := f"{state.spec.suite}/{bound.denominator}") in states]


def _floored(options: EngineOptions, spec: CellSpec) -> EngineOptions:
    """The run's options with ``spec``'s own floor of rounds, if it has a higher one (never above the cap)."""
    if spec.min_rounds is None or spec.min_rounds <= options.min_samples:
        return options
    return replace(options, min_samples=min(spec.min_rounds, options.max_samples))


def _decide_pairs(pairs: Sequence[_Pair], states: Mapping[str, CellRounds], stops: dict[str, Stop | None],
                  allowance: Allowance, overhead_ns: float, spent_ns: float) -> None:
    """Keep both cells of every undecided verdict in the next round (their ``stops`` set to ``None``), as far as
    ``allowance`` pays for the rounds that could decide it: granted cheapest first, as a cell's asks."""
    by_key: dict[str, _Pair] = {}
    asks: list[Ask] = []
    going: list[_Pair] = []
    for pair in pairs:
        if pair.numerator not in stops or pair.denominator not in stops:
            continue  # a cell of it has finished: the pair can take no more rounds
        wanted = pair.wanted(states, stops)
        if wanted is None:
            continue
        count, so_far = wanted
        if count <= pair.granted:
            going.append(pair)  # the rounds granted before still reach the count that could decide it
            continue
        visit_ns = sum(states[name].visit_ns(overhead_ns) for name in (pair.numerator, pair.denominator))
        by_key[pair.key] = pair
        asks.append(Ask(pair.key, count, (count - max(so_far, pair.granted)) * visit_ns))
    for ask in allowance.grant(asks, spent_ns):
        by_key[ask.key].granted = ask.rounds
        going.append(by_key[ask.key])
    for pair in going:
        stops[pair.numerator] = stops[pair.denominator] = None


def run_rounds(cells: Iterable[CellSpec], options: EngineOptions,
               measure: Callable[[CellSpec, RoundPlan], CellResult], *, seed: int,
               finished: Callable[[CellResult], None], round_ended: Callable[[Round], None] = lambda r: None,
               started: Callable[[CellSpec], None] = lambda spec: None,
               round_started: Callable[[int, Sequence[CellSpec]], None] = lambda number, cells: None,
               reference: Callable[[], float | None] = reference_ns,
               now: Callable[[], float] = time.monotonic,
               probe: Callable[[], int] | None = None) -> list[CellResult]:
    """Measure ``cells`` in rounds until each has stopped; return the merged results in the cells' order.

    Parameters
    ----------
    measure
        Measures one cell for one round (a fresh worker in a run).
    seed
        Seeds every round's order (recorded in the round records).
    finished
        Called with each cell's merged result as soon as it drops
        out: the run streams it to the results file.
    round_started
        Called before each round with its number and its cells in order
        (the run starts the round's zygotes there).
    round_ended
        Called after each round, with the reference workload's time then.
    probe
        The machine probe (:func:`~stratabench.engine.probe.machine_probe`)
        read here to seed the run's probe median before any worker reported
        one; ``None``: the system's. Unused when ``options.retake`` is off:
        the workers then take every sample once, unprobed.

    An interrupt ends the run after writing, through ``finished``, the
    merged results of every cell that has finished a round.
    """
    states = {cell_key(spec): CellRounds(spec, _floored(options, spec)) for spec in cells}
    keys = {name: state.spec.group for name, state in states.items()}
    active = list(states)
    done: set[str] = set()
    allowance = Allowance(options.run_allowance)
    pairs = _pairs(states)
    pair_allowance = Allowance(options.run_allowance)
    began = now()
    # The rounds' own time (each from its start to its last visit's end): what the allowances are a share of. The
    # time between rounds (the reference workload, the sliced suites' slices, whose extra slices have an allowance
    # of their own in engine/slices.py) is not: counted here, it gave a default run's Python cells a tenth of the
    # slices' 34-38 s more, twice (the cells' allowance and the verdicts').
    rounds_ns = 0.0
    probes = ProbeMedian.measured(probe or machine_probe()) if options.retake else None

    def finish(name: str) -> None:
        done.add(name)
        finished(states[name].result())

    number = 0
    try:
        while active:
            order = round_order(active, number, seed, keys.__getitem__)
            round_began, workers_s = now(), 0.0  # the overhead below includes the round's zygote starts
            round_started(number, [states[name].spec for name in order])
            for name in order:
                state = states[name]
                started(state.spec)
                plan = state.plan(number, None if probes is None else probes.median_ns)
                result = measure(state.spec, plan)
                workers_s += result.duration_s or 0.0
                state.add(result, plan)
                if probes is not None:
                    probes.add([*result.probe_ns, *(retake.probe_ns for retake in result.retaken)])
            round_s = now() - round_began
            rounds_ns += round_s * 1e9
            # What a visit cost beyond its worker's own time (starting it, the parent's side, the round's zygotes).
            overhead_ns = max(0.0, round_s - workers_s) * 1e9 / len(order)
            round_ended(Round(number, tuple(order), reference(), now() - began))
            stops = {name: states[name].stop() for name in active}
            asks = [ask for name in active if (ask := states[name].ask(stops[name], name, overhead_ns)) is not None]
            for ask in allowance.grant(asks, rounds_ns):
                states[ask.key].granted = ask.rounds
                stops[ask.key] = None
            _decide_pairs(pairs, states, stops, pair_allowance, overhead_ns, rounds_ns)
            still: list[str] = []
            for name in active:
                if stops[name] is None:
                    still.append(name)
                else:
                    finish(name)
            active = still
            number += 1
    except BaseException:
        for name in active:
            if name not in done and states[name].measured:
                finish(name)
        raise
    return [states[name].result() for name in states]
