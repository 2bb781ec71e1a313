"""Rounds: shuffled, seeded, groups back to back in ABBA order, cells dropping out; paired ratios cancel drift."""

from __future__ import annotations

from dataclasses import replace

import pytest

from stratabench.engine.clock import FakeClock
from stratabench.engine.measure import measure_operation
from stratabench.engine.operation import CellSpec, Operation, PairedBound
from stratabench.engine.rounds import Round, decided, round_order, run_rounds
from stratabench.engine.sampling import PAIRED_ROUNDS_CAP, RoundPlan
from stratabench.options import EngineOptions
from stratabench.report.compare import paired
from stratabench.results.records import CellResult, MetricResult, paired_ratio_of

# A cap of 12: the count after 9 at which the interval of the median leaves out another value at each end.
OPTIONS = EngineOptions(min_samples=6, max_samples=12, round_samples=2, target=0.02, cell_budget_ns=10**12,
                        warmups=0, min_sample_ns=0, memory_samples=0)


class Machine:
    """A fake clock whose speed changes from round to round, and the operations that run on it."""

    def __init__(self, speeds: dict[int, float] | None = None) -> None:
        self.fake = FakeClock()
        self.speeds = speeds or {}
        self.round = 0
        self.costs: dict[str, list[float]] = {}
        self.calls: dict[str, int] = {}
        self.plans: list[tuple[str, RoundPlan]] = []

    def cost(self, name: str, *costs: float) -> CellSpec:
        """A cell whose operation costs these nanoseconds in turn (times the machine's speed at the time)."""
        self.costs[name] = list(costs)
        return CellSpec("fake", name)

    def measure(self, spec: CellSpec, plan: RoundPlan) -> CellResult:
        self.round = plan.number
        self.plans.append((spec.name, plan))

        def call() -> None:
            count = self.calls[spec.name] = self.calls.get(spec.name, 0) + 1
            costs = self.costs[spec.name]
            self.fake.advance(int(costs[count % len(costs)] * self.speeds.get(self.round, 1.0)))

        return measure_operation(Operation(call=call, trace_memory=False), OPTIONS, self.fake.clock, plan).result(spec)


def run(machine: Machine, cells: list[CellSpec], seed: int = 7) -> tuple[list[CellResult], list[Round], list[str]]:
    rounds: list[Round] = []
    finished: list[str] = []
    results = run_rounds(cells, OPTIONS, machine.measure, seed=seed, finished=lambda r: finished.append(r.cell),
                         round_ended=rounds.append, reference=lambda: 1.0)
    return results, rounds, finished


def test_round_order_is_seeded_shuffled_and_keeps_a_group_adjacent_reversing_it_every_other_round() -> None:
    units = [("a", "x"), ("b", None), ("c", "x"), ("d", None), ("e", None), ("f", "y"), ("g", "y")]

    def group(unit: tuple[str, str | None]) -> str | None:
        return unit[1]

    orders = [[name for name, _ in round_order(units, number, 42, group)] for number in range(6)]
    assert orders == [[name for name, _ in round_order(units, number, 42, group)] for number in range(6)]  # seeded
    assert len({tuple(order) for order in orders}) > 1  # shuffled
    for number, order in enumerate(orders):
        for first, second in (("a", "c"), ("f", "g")):
            at = order.index(first)
            assert order[at + (1 if number % 2 == 0 else -1)] == second  # adjacent: A B, then B A
    assert [name for name, _ in round_order(units, 0, 43, group)] != orders[0] or orders[1] != orders[0]


def test_a_stable_cell_drops_out_after_its_floor_of_rounds_and_a_noisy_one_samples_to_the_cap() -> None:
    machine = Machine()
    stable, noisy = machine.cost("stable", 100), machine.cost("noisy", 100, 100, 150, 60, 100, 190, 80)
    results, rounds, finished = run(machine, [noisy, stable])
    by_name = {r.cell: r for r in results}
    assert len(rounds) == OPTIONS.max_samples
    assert finished == ["stable", "noisy"]  # each written as soon as it stopped
    assert by_name["stable"].metrics["wall_ns"].rounds == tuple(n for n in range(6) for _ in range(2))
    assert by_name["noisy"].metrics["wall_ns"].summary.n == OPTIONS.max_samples
    assert [r.order for r in rounds][6:] == [("fake/noisy",)] * 6  # the stable cell left the later rounds
    assert not by_name["stable"].flags and by_name["noisy"].flags
    plans = [plan for name, plan in machine.plans if name == "stable"]
    assert plans[0].first and plans[0].loops is None and all(not p.first and p.loops == 1 for p in plans[1:])


def test_a_paired_ratio_cancels_a_drift_that_two_unpaired_medians_carry() -> None:
    # The machine's speed swings from round to round (0.7x to 1.5x), as a shared VM's does over minutes.
    speeds = {0: 1.0, 1: 1.5, 2: 0.7, 3: 1.3, 4: 0.8, 5: 1.4, 6: 0.9, 7: 1.2}
    machine = Machine(speeds)
    a = CellSpec("fake", "a", group="fake/pair")
    b = CellSpec("fake", "b", group="fake/pair")
    machine.costs.update({"a": [130.0], "b": [100.0]})
    results, _, _ = run(machine, [a, b])
    paired = paired_ratio_of(*results)
    assert paired is not None and paired.value == pytest.approx(1.3) and paired.clear()
    assert paired.high - paired.low < 0.01  # the drift cancels within each round
    # The same two cells measured the old way: each in its own window, at the machine's speed of that moment.
    unpaired = []
    for name, moment in (("a", 2), ("b", 1)):
        machine.round = moment
        spec = CellSpec("fake", name)

        def call(name: str = name) -> None:
            machine.fake.advance(int(machine.costs[name][0] * speeds[machine.round]))

        unpaired.append(measure_operation(Operation(call=call, trace_memory=False), OPTIONS, machine.fake.clock)
                        .result(spec).median("wall_ns"))
    assert unpaired[0] / unpaired[1] == pytest.approx(1.3 * 0.7 / 1.5, rel=0.01)  # 0.61x: the drift, not the code


def test_a_failed_round_ends_only_its_cell_and_an_interrupt_writes_what_was_measured() -> None:
    machine = Machine()
    good, bad = machine.cost("good", 100), CellSpec("fake", "bad")

    def measure(spec: CellSpec, plan: RoundPlan) -> CellResult:
        if spec.name == "bad" and plan.number == 1:
            return CellResult.failure(spec, "failed", "broke in round 1")
        if spec.name == "bad":
            machine.costs["bad"] = [100.0]
        if plan.number == 3:
            raise KeyboardInterrupt
        return machine.measure(spec, plan)

    written: list[CellResult] = []
    with pytest.raises(KeyboardInterrupt):
        run_rounds([good, bad], OPTIONS, measure, seed=1, finished=written.append, reference=lambda: None)
    assert [(r.cell, r.status) for r in written] == [("bad", "failed"), ("good", "ok")]
    assert written[1].metrics["wall_ns"].summary.n == 3  # rounds 0-2, kept


def test_the_budget_counts_each_round_s_whole_worker_so_a_fast_noisy_cell_stops_at_its_floor() -> None:
    machine = Machine()
    noisy = machine.cost("noisy", 100, 100, 150, 60, 100, 190, 80)
    options = replace(OPTIONS, cell_budget_ns=1_000_000_000)  # 1 s; every round's worker takes 0.3 s

    def measure(spec: CellSpec, plan: RoundPlan) -> CellResult:
        return replace(machine.measure(spec, plan), duration_s=0.3)

    results = run_rounds([noisy], options, measure, seed=3, finished=lambda r: None, reference=lambda: None)
    wall = results[0].metrics["wall_ns"]
    assert wall.summary.n == options.min_samples  # the floor, not the 10-round cap
    # (Calibration times the first call twice: the costs' cycle is one call further on than a single look left it.)
    assert results[0].flags == (
        "thread_cpu_ns: interval ±31.7% of the median > ±2.0% target, from 6 rounds (96.87%); 1 s budget spent",)
    assert results[0].duration_s == pytest.approx(0.3 * options.min_samples)


class Host:
    """A fake host that takes the CPU away: wall time swings from round to round, the thread's CPU time does not."""

    def __init__(self, stolen: dict[int, float], only: str | None = None) -> None:
        self.fake = FakeClock()
        self.stolen = stolen
        self.only = only

    def measure(self, spec: CellSpec, plan: RoundPlan) -> CellResult:
        stolen = self.stolen.get(plan.number, 0.0) if self.only in (None, spec.name) else 0.0

        def call() -> None:
            # The work costs 100 ns of CPU; the host adds waiting that only wall time sees.
            self.fake.advance(int(100 * (1 + stolen)), 100)

        operation = Operation(call=call, trace_memory=False, waits=spec.name.startswith("waits"))
        return measure_operation(operation, OPTIONS, self.fake.clock, plan).result(spec)


def test_a_cell_working_in_its_thread_is_judged_on_cpu_time_and_one_that_waits_on_wall_time() -> None:
    host = Host({1: 0.6, 3: 0.3, 4: 1.1})
    cpu, waits = CellSpec("fake", "cpu", group="fake/g"), CellSpec("fake", "waits", group="fake/g")
    results = {r.cell: r for r in run_rounds([cpu, waits], OPTIONS, host.measure, seed=5, finished=lambda r: None,
                                             reference=lambda: None)}
    assert (results["cpu"].judged_metric, results["waits"].judged_metric) == ("thread_cpu_ns", "wall_ns")
    # The CPU-judged cell met its target at the floor; its wall time swung 2.1x, and is not what stops or flags it.
    assert results["cpu"].metrics["thread_cpu_ns"].summary.n == OPTIONS.min_samples and not results["cpu"].flags
    assert results["cpu"].summary("wall_ns") is not None
    assert results["waits"].metrics["wall_ns"].summary.n == OPTIONS.max_samples
    assert results["waits"].flags and results["waits"].flags[0].startswith("wall_ns: interval ±")
    # The cells stopped apart, the CPU cell at its floor: the group's pairs are the rounds both took.
    assert paired_ratio_of(results["waits"], results["cpu"]).pairs == OPTIONS.min_samples  # type: ignore[union-attr]


def test_a_ratio_is_taken_on_the_metric_both_cells_are_judged_on() -> None:
    host = Host({1: 0.5, 2: 0.2, 4: 0.4}, only="a")  # the host took the CPU away while a ran, not b
    a, b = CellSpec("fake", "a", group="fake/g"), CellSpec("fake", "b", group="fake/g")
    first, second = run_rounds([a, b], OPTIONS, host.measure, seed=5, finished=lambda r: None, reference=lambda: None)
    on_cpu = paired_ratio_of(first, second)
    assert on_cpu is not None and on_cpu.value == 1.0 and on_cpu.low == on_cpu.high == 1.0
    on_wall = paired_ratio_of(first, second, "wall_ns")
    assert on_wall is not None and on_wall.high == 1.5  # wall time counts what the host took


def test_each_round_is_announced_with_its_cells_in_order_before_its_first_is_measured() -> None:
    machine = Machine()
    stable, noisy = machine.cost("stable", 100), machine.cost("noisy", 100, 100, 150, 60, 100, 190, 80)
    announced: list[tuple[int, list[str], int]] = []
    rounds: list[Round] = []
    run_rounds([noisy, stable], OPTIONS, machine.measure, seed=7, finished=lambda r: None, round_ended=rounds.append,
               round_started=lambda number, cells: announced.append((number, [c.name for c in cells],
                                                                     len(machine.plans))),
               reference=lambda: 1.0)
    assert [number for number, _, _ in announced] == list(range(len(rounds)))
    assert [tuple(f"fake/{name}" for name in names) for _, names, _ in announced] == [r.order for r in rounds]
    # Announced before the round's first visit: the visits so far are those of the earlier rounds.
    assert [visits for _, _, visits in announced] == [sum(len(r.order) for r in rounds[:n]) for n in range(len(rounds))]


class Rounds:
    """Cells whose value in each round is set per round (one far round, a spread), each round's worker taking ``cost_s``."""

    def __init__(self) -> None:
        self.fake = FakeClock()
        self.values: dict[str, dict[int, float]] = {}
        self.costs: dict[str, float] = {}
        self.now_s = 0.0  # the run's clock: each visit takes its worker's time and the round's overhead
        self.overhead_s: dict[int, float] = {}

    def cell(self, name: str, cost_s: float, **rounds: float) -> CellSpec:
        """A cell that costs 100 ns an operation, except in the rounds named ``r3=130``; its worker takes ``cost_s``."""
        self.values[name] = {int(key[1:]): value for key, value in rounds.items()}
        self.costs[name] = cost_s
        return CellSpec("fake", name)

    def measure(self, spec: CellSpec, plan: RoundPlan) -> CellResult:
        cost = self.values[spec.name].get(plan.number, 100.0)
        result = measure_operation(Operation(call=lambda: self.fake.advance(int(cost)), trace_memory=False),
                                   ALLOWANCE_OPTIONS, self.fake.clock, plan).result(spec)
        self.now_s += self.costs[spec.name] + self.overhead_s.get(plan.number, 0.0)
        return replace(result, duration_s=self.costs[spec.name])


# One sample a round, a 0.5 s budget (the floor of six 0.1 s rounds spends it), a target of ±2%, a cap of 12.
ALLOWANCE_OPTIONS = replace(OPTIONS, round_samples=1, cell_budget_ns=500_000_000, run_allowance=0.1)


def run_with_allowance(fake: Rounds, cells: list[CellSpec], share: float,
                       allowance_rounds: int = 12) -> dict[str, CellResult]:
    options = replace(ALLOWANCE_OPTIONS, run_allowance=share, allowance_rounds=allowance_rounds)
    results = run_rounds(cells, options, fake.measure, seed=11, finished=lambda r: None, reference=lambda: None,
                         now=lambda: fake.now_s)
    return {result.cell: result for result in results}


def rounds_of(result: CellResult) -> int:
    return len(set(result.metrics[result.judged_metric].rounds or ()))


def test_the_allowance_gives_rounds_to_the_cells_one_far_round_flags_and_none_to_a_stable_one() -> None:
    fake = Rounds()
    cells = [fake.cell("stable", 0.1), fake.cell("one_slow", 0.1, r3=130.0), fake.cell("two_slow", 0.1, r3=130.0, r7=130.0),
             fake.cell("spread", 0.1, r1=120.0, r3=120.0, r5=120.0)]
    results = run_with_allowance(fake, cells, share=0.5)  # enough for every ask here
    # The stable cell met its target at the floor; the spread could not meet it at nine rounds, so it asked none.
    assert rounds_of(results["stable"]) == 6 and not results["stable"].flags
    assert rounds_of(results["spread"]) == 6 and results["spread"].flags
    # One far round: nine rounds leave it out of the interval. Two: twelve do.
    assert rounds_of(results["one_slow"]) == 9 and not results["one_slow"].flags
    assert rounds_of(results["two_slow"]) == 12 and not results["two_slow"].flags


@pytest.mark.parametrize(("allowance_rounds", "rounds"), [(12, 12), (9, 6)])
def test_two_far_rounds_at_one_end_ask_for_the_twelve_rounds_that_could_drop_both(allowance_rounds: int,
                                                                                   rounds: int) -> None:
    # arrow/table access's rounds (1.43 and 1.2 among values near 1.0): nine rounds' interval keeps the 1.2, so
    # a cell that may ask only for its next narrower count (9) asks for nothing and is flagged at its floor.
    fake = Rounds()
    cells = [fake.cell("stable", 0.5), fake.cell("two_slow", 0.1, r1=143.0, r3=120.0)]
    results = run_with_allowance(fake, cells, share=0.5, allowance_rounds=allowance_rounds)
    assert rounds_of(results["two_slow"]) == rounds
    assert bool(results["two_slow"].flags) == (rounds == 6)
    assert rounds_of(results["stable"]) == 6


def test_without_an_allowance_every_cell_stops_at_its_floor_as_its_budget_says() -> None:
    fake = Rounds()
    results = run_with_allowance(fake, [fake.cell("one_slow", 0.1, r3=130.0)], share=0.0)
    assert rounds_of(results["one_slow"]) == 6
    assert results["one_slow"].flags == (
        "thread_cpu_ns: interval ±15.0% of the median > ±2.0% target, from 6 rounds (96.87%); 0.5 s budget spent",)


def test_the_allowance_goes_to_the_cheapest_cells_first_and_is_not_overspent() -> None:
    fake = Rounds()
    cells = [fake.cell("stable", 0.1), fake.cell("cheap", 0.1, r3=130.0), fake.cell("dear", 0.3, r3=130.0),
             fake.cell("middle", 0.2, r2=130.0)]
    results = run_with_allowance(fake, cells, share=0.1)
    # Six rounds took 6 × 0.7 s: a tenth is 0.42 s; cheap asks 0.3 s (3 rounds of 0.1), middle 0.6, dear 0.9.
    assert rounds_of(results["cheap"]) == 9 and not results["cheap"].flags
    assert rounds_of(results["middle"]) == 6 and rounds_of(results["dear"]) == 6
    assert results["dear"].flags and results["middle"].flags
    extra_s = sum((result.duration_s or 0.0) for result in results.values()) - 6 * 0.7
    assert extra_s == pytest.approx(0.3) and extra_s <= 0.1 * 6 * 0.7  # a tenth of the floor, not more


@pytest.mark.parametrize(("overhead_s", "rounds"), [(0.0, 9), (0.2, 6)])
def test_an_ask_costs_its_visits_with_what_each_spent_beyond_its_worker(overhead_s: float, rounds: int) -> None:
    fake = Rounds()
    fake.overhead_s = {5: overhead_s}  # the parent's side of each visit in the round before the asks
    results = run_with_allowance(fake, [fake.cell("one_slow", 0.1, r3=130.0)], share=0.5)
    # Without overhead: half of 0.6 s pays for 3 rounds of 0.1 s. With it: half of 0.8 s cannot pay for 3 of 0.3 s.
    assert rounds_of(results["one_slow"]) == rounds


def test_a_cell_with_a_floor_of_its_own_takes_those_rounds_and_the_others_the_run_s() -> None:
    # Two stable cells; the one a verdict divides asks for ROBUST_ROUNDS, whose interval leaves out the extremes.
    from stratabench.engine.sampling import ROBUST_ROUNDS

    machine = Machine()
    plain = machine.cost("plain", 100)
    judged = CellSpec("fake", "judged", min_rounds=ROBUST_ROUNDS)
    machine.costs["judged"] = [100]
    above_cap = CellSpec("fake", "above cap", min_rounds=OPTIONS.max_samples + 5)
    machine.costs["above cap"] = [100]
    results, _, _ = run(machine, [plain, judged, above_cap])
    rounds = {r.cell: len(set(r.metrics["wall_ns"].rounds)) for r in results}
    assert rounds == {"plain": OPTIONS.min_samples, "judged": ROBUST_ROUNDS, "above cap": OPTIONS.max_samples}
    assert CellSpec.from_json(judged.to_json()) == judged  # the floor crosses into the worker with the cell


# Cells that meet their own target (±10%) at their floor of nine rounds; only a verdict on two of them asks for more.
PAIR_OPTIONS = replace(ALLOWANCE_OPTIONS, target=0.1, max_samples=40)


def run_pairs(fake: Rounds, cells: list[CellSpec], share: float = 0.5) -> dict[str, CellResult]:
    results = run_rounds(cells, replace(PAIR_OPTIONS, run_allowance=share), fake.measure, seed=11,
                         finished=lambda r: None, reference=lambda: None, now=lambda: fake.now_s)
    return {result.cell: result for result in results}


def pair(fake: Rounds, name: str, bound: float, **numerator_rounds: float) -> list[CellSpec]:
    """``name`` (118 ns, or as ``numerator_rounds`` say) over ``name/base`` (100 ns), held to ``bound``; nine rounds each."""
    base = replace(fake.cell(f"{name}/base", 0.1), min_rounds=9)
    numerator = replace(fake.cell(name, 0.1, **{"r0": 118.0, **numerator_rounds}), min_rounds=9,
                        bounds=(PairedBound(f"{name}/base", bound),))
    fake.values[name] = {number: fake.values[name].get(number, 118.0) for number in range(40)}
    return [numerator, base]


def test_an_undecided_verdict_takes_rounds_until_it_is_decided_and_a_decided_one_none() -> None:
    fake = Rounds()
    # 1.18× against 1.2×, two rounds at 1.25×: nine rounds' interval holds them (1.18-1.25×), twelve leave them out.
    close = pair(fake, "close", 1.2, r1=125.0, r4=125.0)
    clear = pair(fake, "clear", 1.2, r1=125.0)  # nine rounds leave out the one far round: decided at the floor
    results = run_pairs(fake, close + clear)
    assert {name: rounds_of(result) for name, result in results.items()} == {
        "close": 12, "close/base": 12, "clear": 9, "clear/base": 9}
    for name in ("close", "clear"):
        assert paired(results[name], results[f"{name}/base"]).clear_of(1.2) is False  # met: wholly below


def test_an_undecided_verdict_stops_at_the_cap() -> None:
    fake = Rounds()
    # A far round each time the pair nears a count that could leave them out (12, 15, 20), the last at the cap.
    capped = pair(fake, "capped", 1.2, **{f"r{number}": 125.0 for number in (1, 4, 9, 12, 15, 19)})
    costly = replace(fake.cell("costly", 1.0), min_rounds=9)  # its floor's time makes the allowance pay for all
    results = run_pairs(fake, capped + [costly])
    assert rounds_of(results["capped"]) == rounds_of(results["capped/base"]) == PAIRED_ROUNDS_CAP
    assert paired(results["capped"], results["capped/base"]).clear_of(1.2) is None  # too close to call


def test_the_rounds_of_verdicts_come_from_their_own_allowance() -> None:
    fake = Rounds()
    results = run_pairs(fake, pair(fake, "close", 1.2, r1=125.0, r4=125.0), share=0.0)
    assert rounds_of(results["close"]) == rounds_of(results["close/base"]) == 9


def keep_rounds(result: CellResult, numbers: list[int]) -> CellResult:
    """``result`` as if only rounds ``numbers`` had been measured."""
    metrics = {}
    for name, metric in result.metrics.items():
        kept = [(value, number) for value, number in zip(metric.samples, metric.rounds or ()) if number in numbers]
        metrics[name] = MetricResult.of([value for value, _ in kept], [number for _, number in kept])
    return replace(result, metrics=metrics)


@pytest.mark.parametrize("seed", range(40))
def test_the_engine_stops_a_verdict_exactly_where_the_report_calls_it(seed: int) -> None:
    import random

    rng = random.Random(seed)
    fake = Rounds()
    bound = 1.2
    cells = pair(fake, "pair", bound, **{f"r{number}": rng.uniform(112.0, 128.0) for number in range(40)})
    costly = replace(fake.cell("costly", 10.0), min_rounds=9)  # its floor's time makes the allowance pay for all
    results = run_pairs(fake, cells + [costly], share=1.0)
    numerator, denominator = results["pair"], results["pair/base"]
    said = paired(numerator, denominator).clear_of(bound)
    assert decided(numerator, denominator, PairedBound("pair/base", bound)) == (said is not None)
    # Decided at the floor: no more rounds; decided later: the rounds stopped at the first count that decided it.
    rounds = rounds_of(numerator)
    assert rounds == rounds_of(denominator) <= PAIRED_ROUNDS_CAP
    if said is not None and rounds > 9:
        earlier = [number for number in range(rounds - 1)]
        assert not decided(keep_rounds(numerator, earlier), keep_rounds(denominator, earlier),
                           PairedBound("pair/base", bound))


def test_the_allowance_is_a_share_of_the_rounds_own_time_not_of_what_runs_between_them() -> None:
    fake = Rounds()
    cells = [fake.cell("stable", 0.1), fake.cell("cheap", 0.1, r3=130.0), fake.cell("dear", 0.3, r3=130.0)]

    def slices_between_rounds(ended: Round) -> None:
        fake.now_s += 10.0  # the sliced suites' slices: counted, a tenth of them would pay for every ask here

    options = replace(ALLOWANCE_OPTIONS, run_allowance=0.1)
    results = {result.cell: result for result in run_rounds(
        cells, options, fake.measure, seed=11, finished=lambda r: None, round_ended=slices_between_rounds,
        reference=lambda: None, now=lambda: fake.now_s)}
    # Six rounds of 0.5 s: a tenth is 0.3 s, cheap's three rounds of 0.1 s and not dear's three of 0.3 s.
    assert rounds_of(results["cheap"]) == 9 and rounds_of(results["dear"]) == 6 and results["dear"].flags
