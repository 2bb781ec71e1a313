"""The answers' one ratio: per-round pairs when both cells have rounds, the two medians' bootstrap before rounds."""

from __future__ import annotations

import pytest

from stratabench.report.paired import paired_ratio
from stratabench.results.records import CellResult, MetricResult

#: The machine's speed in each of eight rounds: it swings from 0.7x to 1.5x, as a shared VM's does over minutes.
SPEED = [1.0, 1.5, 0.7, 1.3, 0.8, 1.4, 0.9, 1.2]


def cell(name: str, cost: float, rounds: bool = True) -> CellResult:
    samples = [cost * speed * (1 + 0.002 * (i % 3)) for i, speed in enumerate(SPEED)]
    return CellResult("s", name, {}, "python", "ok",
                      metrics={"wall_ns": MetricResult.of(samples, list(range(8)) if rounds else None)})


def test_cells_with_rounds_give_the_median_of_per_round_ratios_which_the_drift_does_not_reach() -> None:
    measured = paired_ratio(cell("a", 150.0), cell("b", 100.0))
    assert measured is not None and measured.n == 8 and measured.enough
    assert measured.value == pytest.approx(1.5, rel=0.01) and measured.sureness() == "clear"
    assert measured.high - measured.low < 0.02


def test_cells_from_before_rounds_fall_back_to_the_medians_and_the_drift_widens_their_interval() -> None:
    measured = paired_ratio(cell("a", 150.0, rounds=False), cell("b", 100.0, rounds=False))
    assert measured is not None and measured.n == 8
    assert measured.high - measured.low > 0.3  # the swing of the machine, not of the code
