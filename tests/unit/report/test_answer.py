"""The answer's table: beside a tie it names the closest tied candidate, not the first one clearly behind."""

from __future__ import annotations

from stratabench.report.answer import Candidate, answer
from stratabench.results.stats import Summary


def _time(median: float, low: float, high: float) -> Summary:
    return Summary(n=6, median=median, min=low, max=high, mean=median, stdev=None, ci_low=low, ci_high=high,
                   ci_level=0.97)


def test_a_tie_sets_the_closest_tied_candidate_beside_the_winner() -> None:
    found = answer("s", "which is fastest", [
        Candidate("a", _time(1.0, 0.9, 1.1)), Candidate("b", _time(1.05, 0.95, 1.2)),
        Candidate("c", _time(1.08, 1.0, 1.3)), Candidate("d", _time(8.0, 7.9, 8.1))])
    (row,) = found.table().rows
    assert (row["best"], row["next"], row["sure"]) == ("a", "b (1.05 ns)", "tie (97% intervals overlap); so do c")


def test_a_clear_winner_sets_the_runner_up_beside_it() -> None:
    found = answer("s", "which is fastest", [Candidate("a", _time(1.0, 0.9, 1.1)), Candidate("d", _time(8.0, 7.9, 8.1))])
    (row,) = found.table().rows
    assert (row["next"], row["sure"]) == ("d (8.00 ns)", "clear: next best 8.00× (97% intervals apart)")
