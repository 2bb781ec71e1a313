"""The engine for your own code: measure a callable or a statement from Python.

>>> import stratabench
>>> result = stratabench.measure(lambda: sorted(range(100)))
>>> result.median("wall_ns") > 0
True
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from stratabench.datasets.verify import Integrity
from stratabench.engine.clock import SYSTEM_CLOCK, Clock
from stratabench.engine.measure import measure_operation
from stratabench.engine.operation import CellSpec, Operation
from stratabench.engine.statement import compile_statement, one_line
from stratabench.options import EngineOptions
from stratabench.results.records import CellResult

__all__ = ["measure", "timeit"]


def _result(name: str, operation: Operation, options: EngineOptions, clock: Clock) -> CellResult:
    return measure_operation(operation, options, clock).result(CellSpec("api", name))


def measure(
    fn: Callable[[], object],
    *,
    name: str | None = None,
    samples: int | None = None,
    min_time: float = 0.1,
    warmups: int = 1,
    memory: bool = False,
    verify: Callable[[object], Integrity] | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> CellResult:
    """Measure a callable in this process with stratabench's engine.

    Parameters
    ----------
    fn
        Called with no arguments, many times, in calibrated loops.
    name
        How the result is labelled (default: the function's name).
    samples, min_time, warmups
        As ``stratabench run``'s ``--samples``, ``--min-time`` (seconds)
        and ``--warmups``; ``samples=None`` samples adaptively, until the
        median's interval is within 2% (the result's ``flags`` say when not).
    memory
        Also run the tracemalloc pass (``alloc_bytes``, ``retained_bytes``, ``allocs``).
    verify
        Checks one result of ``fn``, outside timing.

    Returns
    -------
    CellResult
        ``result.median("wall_ns")``, ``result.summary("wall_ns")`` and the raw
        samples in ``result.metrics``.
    """
    options = EngineOptions(samples=samples, warmups=warmups, min_sample_ns=int(min_time * 1e9),
                            memory_samples=1 if memory else 0, isolate=False)
    label = name or str(getattr(fn, "__qualname__", "callable"))
    return _result(label, Operation(call=fn, verify=verify, trace_memory=memory), options, clock)


def timeit(
    stmt: str = "pass",
    setup: str = "pass",
    *,
    globals: dict[str, Any] | None = None,  # noqa: A002 - the name timeit.timeit uses
    samples: int | None = None,
    min_time: float = 0.1,
    warmups: int = 1,
    clock: Clock = SYSTEM_CLOCK,
) -> CellResult:
    """Time a statement as :mod:`timeit` does: inlined in the timed loop.

    ``setup`` runs before each timed loop, untimed, and the names it binds
    are local to the loop, so the statement is measured without any call
    overhead of its own. Both may have several lines.

    Raises
    ------
    StatementError
        When ``stmt`` or ``setup`` is not valid Python, or one of their
        lines raises: one line naming it.
    """
    compiled = compile_statement(stmt, setup)
    namespace = dict(globals or {})
    once = partial(compiled.loop_timer(namespace, clock), 1)
    operation = Operation(call=once, statement=(stmt, setup), namespace=namespace, trace_memory=False)
    options = EngineOptions(samples=samples, warmups=warmups, min_sample_ns=int(min_time * 1e9),
                            memory_samples=0, isolate=False)
    return _result(one_line(stmt), operation, options, clock)
