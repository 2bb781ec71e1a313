"""``ab``'s verdict rule: a t interval of the log-ratios at the family level, tried on synthetic cells.

The noise is this machine's, as a self-comparison of the default suites at a
load of 12 measured it: per-visit CPU time spread by 1% to 20% (log-normal,
the cells' spread drawn between those), and one visit in twenty hit by an
extra 10-50% (a neighbour thrashing the caches), on either side.
"""

from __future__ import annotations

import math

import numpy as np

from stratabench.metrics import metric
from stratabench.report.ab import ab_summary, family_level, judge, least_per_round, log_ratio_interval
from stratabench.results.records import CellResult, MetricResult

ROUNDS = 6


def visits(rng: np.random.Generator, spread: float, rounds: int = ROUNDS, hit: float = 0.05) -> list[float]:
    """One side's per-round CPU time of a cell costing 1.0: log-normal noise and, at rate ``hit``, a hit."""
    hits = np.where(rng.random(rounds) < hit, 1 + rng.uniform(0.1, 0.5, rounds), 1.0)
    return list(np.exp(rng.normal(0, spread, rounds)) * hits)


def result(values: list[float]) -> CellResult:
    return CellResult("s", "c", {}, "python", "ok", loops=1,
                      metrics={"cpu_ns": MetricResult.of(values, list(range(len(values))))})


def verdicts(rng: np.random.Generator, cells: int, shift: float, level: float,
             spreads: list[float]) -> list[str]:
    words = []
    for spread in spreads[:cells]:
        a, b = visits(rng, spread), [shift * v for v in visits(rng, spread)]
        judged = judge(result(a), result(b), metric("cpu_ns"), 0.05, level)
        assert judged is not None and judged.pairs == ROUNDS
        words.append(judged.verdict)
    return words


def test_the_family_level_splits_five_percent_among_the_cells_and_the_looks() -> None:
    assert family_level(1) == 0.95
    assert math.isclose(family_level(331), 1 - 0.05 / 331)
    assert math.isclose(family_level(32, looks=3), 1 - 0.05 / 96)


def test_a_self_comparison_of_3000_noisy_cells_calls_none_changed_where_a_95_percent_interval_calls_one_in_20() -> None:
    rng = np.random.default_rng(22)
    cells = 3000
    spreads = list(np.exp(rng.uniform(math.log(0.01), math.log(0.2), cells)))
    state = rng.bit_generator.state
    words = verdicts(rng, cells, 1.0, family_level(cells), spreads)
    called = sum(word in ("slower", "faster") for word in words)
    # Designed: a chance of at most 5% that any of the 3000 is called; the target is 1 in 300 (10 here).
    assert called == 0
    # The same cells at a level fixed per cell (95%, what a lone cell would get) call about one in twenty.
    rng.bit_generator.state = state
    loose = verdicts(rng, cells, 1.0, 0.95, spreads)
    assert sum(word in ("slower", "faster") for word in loose) > cells / 50


def test_a_ten_percent_slowdown_is_caught_and_its_interval_holds_it() -> None:
    rng = np.random.default_rng(10)
    # 16 injected cells and 16 twins judged together, as benchmarks/ab_targets.py does, at the probe cells'
    # spread (their 6-round medians of a 10% slowdown held 1.09-1.14 at a load of 12: about 2% a round).
    level = family_level(32)
    spreads = [0.01 + 0.01 * i / 15 for i in range(16)]
    injected = []
    covered = 0
    for spread in spreads:
        a, b = visits(rng, spread, hit=0), [1.10 * v for v in visits(rng, spread, hit=0)]
        judged = judge(result(a), result(b), metric("cpu_ns"), 0.05, level)
        assert judged is not None
        injected.append(judged.verdict)
        covered += judged.low <= 1.10 <= judged.high
    twins = verdicts(rng, 16, 1.0, level, spreads)
    assert injected.count("slower") >= 15
    assert covered >= 15
    assert not {"slower", "faster"} & set(twins)


def test_a_round_hit_by_a_neighbour_leaves_a_cell_inconclusive_not_changed() -> None:
    # Five rounds agree that nothing changed; in one, side B's visit was slowed 40%.
    judged = judge(result([1.0] * 6), result([1.0, 1.01, 0.99, 1.4, 1.0, 1.005]), metric("cpu_ns"), 0.05,
                   family_level(32))
    assert judged is not None and judged.verdict == "inconclusive" and judged.low < 1 < judged.high


def test_the_interval_is_the_t_interval_of_the_mean_log_ratio() -> None:
    ratio, low, high = log_ratio_interval([1.0, 1.1, 1.2, 1.05], 0.99) or (0, 0, 0)
    logs = np.log([1.0, 1.1, 1.2, 1.05])
    half = 5.840909309733 * logs.std(ddof=1) / 2  # t(3) at 99.5%, the standard error of four
    assert math.isclose(ratio, math.exp(logs.mean()))
    assert math.isclose(low, math.exp(logs.mean() - half), rel_tol=1e-9)
    assert math.isclose(high, math.exp(logs.mean() + half), rel_tol=1e-9)
    assert log_ratio_interval([1.1, 1.1, 1.1], 0.99) == (1.1, 1.1, 1.1)  # no spread: the interval is the ratio
    assert log_ratio_interval([1.1], 0.99) is None  # one pair: no interval, the cell is inconclusive
    # Two wild pairs at a family level: a bound past a float's range is infinite, not an OverflowError.
    ratio, low, high = log_ratio_interval([0.994, 0.0024], 0.9988) or (0, 0, 0)
    assert high == math.inf and low == 0.0 and math.isclose(ratio, math.sqrt(0.994 * 0.0024))


def test_each_round_is_its_visits_least_sample_so_a_burst_within_a_visit_does_not_move_the_ratio() -> None:
    a = CellResult("s", "c", {}, "python", "ok", loops=1,
                   metrics={"cpu_ns": MetricResult.of([100.0, 101.0, 100.5] * 6, [n for n in range(6) for _ in range(3)])})
    # B costs 10% more; in every round one of its three samples was slowed by a neighbour's burst.
    b = CellResult("s", "c", {}, "python", "ok", loops=1,
                   metrics={"cpu_ns": MetricResult.of([110.0, 190.0, 111.0] * 6, [n for n in range(6) for _ in range(3)])})
    assert least_per_round(b.metrics["cpu_ns"]) == {n: 110.0 for n in range(6)}
    judged = judge(a, b, metric("cpu_ns"), 0.05, family_level(32))
    assert judged is not None and judged.verdict == "slower" and math.isclose(judged.ratio, 1.10)


def test_one_pair_is_inconclusive_and_the_summary_states_the_rule() -> None:
    judged = judge(result([1.0]), result([2.0]), metric("cpu_ns"), 0.05, family_level(10))
    assert judged is not None and judged.verdict == "inconclusive" and judged.pairs == 1
    line = ab_summary([judged], metric("cpu_ns"), 0.05, 0, family_level(10))
    assert "t of the log-ratios at 99.5%" in line and "1 - 5% / (cells x looks)" in line
