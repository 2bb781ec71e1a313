from __future__ import annotations

from stratabench import measure, timeit
from stratabench.engine.clock import FakeClock


def test_measure_a_callable_with_a_fake_clock() -> None:
    clock = FakeClock()
    result = measure(lambda: clock.advance(2_000), samples=4, min_time=0.0001, clock=clock.clock)
    assert result.ok and result.median("wall_ns") == 2_000.0
    assert result.metrics["wall_ns"].summary.n == 4


def test_timeit_runs_a_statement_with_setup() -> None:
    result = timeit("x.append(1)", setup="x = []", samples=3, min_time=0.001)
    assert result.ok and result.loops is not None and result.loops > 1
    assert result.median("wall_ns") is not None and result.median("wall_ns") > 0  # type: ignore[operator]
