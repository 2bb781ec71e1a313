from __future__ import annotations

import pytest

from stratabench import measure, timeit
from stratabench.engine.clock import FakeClock
from stratabench.errors import StatementError


def test_measure_a_callable_with_a_fake_clock() -> None:
    clock = FakeClock()
    result = measure(lambda: clock.advance(2_000), samples=4, min_time=0.0001, clock=clock.clock)
    assert result.ok and result.median("wall_ns") == 2_000.0
    assert result.metrics["wall_ns"].summary.n == 4


def test_timeit_runs_a_statement_with_setup() -> None:
    result = timeit("x.append(1)", setup="x = []", samples=3, min_time=0.001)
    assert result.ok and result.loops is not None and result.loops > 1
    assert result.median("wall_ns") is not None and result.median("wall_ns") > 0  # type: ignore[operator]


def test_timeit_takes_multi_line_and_indented_sources() -> None:
    setup = """
        import math
        values = [math.sqrt(n) for n in range(10)]
    """
    result = timeit("for v in values:\n    v + 1", setup=setup, samples=2, min_time=0.001)
    assert result.ok and result.cell == "for v in values:; v + 1"


def test_timeit_reports_the_users_error_with_its_line() -> None:
    with pytest.raises(StatementError) as caught:
        timeit("x = 1\nundefined_name", samples=2, min_time=0.001)
    assert str(caught.value) == "statement line 2 'undefined_name' raised NameError: name 'undefined_name' is not defined"
    with pytest.raises(StatementError, match="^setup 'x = ' is not valid Python"):
        timeit("pass", setup="x = ")
