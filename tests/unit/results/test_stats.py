from __future__ import annotations

import pytest

from stratabench.results.stats import median_ci_ranks, summarize


def test_summary_of_known_samples() -> None:
    summary = summarize([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (summary.n, summary.median, summary.min, summary.max, summary.mean) == (5, 3.0, 1.0, 5.0, 3.0)
    assert summary.stdev == pytest.approx(1.5811388300841898)
    # Five samples cannot give 95%: the interval is the full range, with its real coverage.
    assert (summary.ci_low, summary.ci_high, summary.ci_level) == (1.0, 5.0, 0.9375)


@pytest.mark.parametrize(
    ("n", "expected"),
    [(1, (1, 1, 0.0)), (6, (1, 6, 0.96875)), (10, (2, 9, 0.978515625)), (20, (6, 15, 0.958611))],
)
def test_median_interval_ranks(n: int, expected: tuple[int, int, float]) -> None:
    low, high, level = median_ci_ranks(n)
    assert (low, high) == expected[:2]
    assert level == pytest.approx(expected[2], abs=1e-6)
    assert level >= 0.95 or n < 6


def test_interval_is_inside_the_range_and_around_the_median() -> None:
    samples = [float(x) for x in range(1, 21)]
    summary = summarize(samples)
    assert (summary.ci_low, summary.ci_high) == (6.0, 15.0)
    assert summary.ci_low <= summary.median <= summary.ci_high


def test_one_sample_has_no_spread() -> None:
    summary = summarize([7.0])
    assert summary.stdev is None and summary.ci_low == summary.ci_high == 7.0


def test_zero_samples_refused() -> None:
    with pytest.raises(ValueError):
        summarize([])


def test_overlap() -> None:
    a = summarize([1.0, 2.0, 3.0])
    assert a.overlaps(summarize([3.0, 4.0, 5.0]))
    assert not a.overlaps(summarize([4.0, 5.0, 6.0]))


def test_round_values_are_each_round_s_median_in_round_order() -> None:
    from stratabench.results.stats import round_values

    assert round_values([5.0, 1.0, 3.0, 9.0, 7.0], [1, 0, 0, 1, 2]) == {0: 2.0, 1: 7.0, 2: 7.0}
    with pytest.raises(ValueError, match="2 samples but 1 round"):
        round_values([1.0, 2.0], [0])


def test_a_paired_ratio_is_the_median_of_per_round_ratios_and_clear_only_when_its_interval_excludes_the_bound() -> None:
    from stratabench.results.stats import paired_ratio

    # The machine doubles its speed every other round: both cells move together, the ratio does not.
    speed = {n: 1.0 if n % 2 else 2.0 for n in range(8)}
    slow = {n: 130.0 * speed[n] + n for n in range(8)}
    fast = {n: 100.0 * speed[n] for n in range(8)}
    ratio = paired_ratio(slow, fast)
    assert ratio is not None and ratio.pairs == 8 and ratio.level >= 0.95
    assert 1.3 < ratio.value < 1.4 and ratio.clear() and ratio.verdict() == "above"
    assert not ratio.clear(1.35) and ratio.verdict(1.35) == "too close to call"
    assert paired_ratio(fast, slow).verdict() == "below"  # type: ignore[union-attr]
    # Rounds that measured only one side do not pair; four pairs never make a clear call (75% at best).
    assert paired_ratio({0: 2.0, 1: 2.0, 2: 2.0, 3: 2.0, 9: 5.0}, {0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0}).clear() is False  # type: ignore[union-attr]
    assert paired_ratio({0: 1.0}, {1: 1.0}) is None


def test_paired_ratio_of_two_cells_needs_rounds_on_both() -> None:
    from stratabench.results.records import CellResult, MetricResult, paired_ratio_of

    def cell(samples: list[float], rounds: list[int] | None) -> CellResult:
        return CellResult("s", "c", {}, "python", "ok", metrics={"wall_ns": MetricResult.of(samples, rounds)})

    a = cell([10.0, 12.0, 20.0, 22.0, 30.0, 30.0], [0, 0, 1, 1, 2, 2])
    b = cell([5.0, 5.0, 10.0, 12.0, 15.0, 15.0], [0, 0, 1, 1, 2, 2])
    assert a.median("wall_ns") == 21.0  # the median of the round medians 11, 21, 30
    ratio = paired_ratio_of(a, b)
    assert ratio is not None and ratio.pairs == 3 and ratio.value == pytest.approx(2.0)
    assert paired_ratio_of(a, cell([5.0], None)) is None
    assert paired_ratio_of(a, b, "cpu_ns") is None
