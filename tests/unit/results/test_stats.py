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
