"""Clocks the engine reads: wall time and this process's CPU time.

The engine takes its clock as a parameter so that tests can drive
calibration and statistics with a :class:`FakeClock`, exactly and fast.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Clock", "FakeClock", "LoopTimer", "SYSTEM_CLOCK"]


@dataclass(frozen=True)
class Clock:
    """A pair of nanosecond counters.

    Attributes
    ----------
    wall_ns
        Monotonic elapsed time (``time.perf_counter_ns``).
    cpu_ns
        This process's user+system CPU time (``time.process_time_ns``).
    thread_cpu_ns
        The calling thread's CPU time (``time.thread_time_ns``): for
        in-process work the truth when the host takes the CPU away, which
        wall time counts and this does not.
    """

    wall_ns: Callable[[], int]
    cpu_ns: Callable[[], int]
    thread_cpu_ns: Callable[[], int] = time.thread_time_ns


SYSTEM_CLOCK = Clock(time.perf_counter_ns, time.process_time_ns, time.thread_time_ns)

#: Takes a loop count, runs the operation that many times, returns (wall_ns, cpu_ns) in total.
LoopTimer = Callable[[int], tuple[int, int]]


class FakeClock:
    """A clock that moves only when the code under test says so.

    Each call of the measured operation should call :meth:`advance`; the
    wall and CPU counters then read exactly what was advanced.
    """

    def __init__(self) -> None:
        self.now_ns = 0
        self.cpu_now_ns = 0

    def advance(self, wall_ns: int, cpu_ns: int | None = None) -> None:
        """Move the wall clock by ``wall_ns`` and the CPU clock by ``cpu_ns`` (default: the same)."""
        self.now_ns += wall_ns
        self.cpu_now_ns += wall_ns if cpu_ns is None else cpu_ns

    @property
    def clock(self) -> Clock:
        """The :class:`Clock` view the engine reads."""
        return Clock(lambda: self.now_ns, lambda: self.cpu_now_ns, lambda: self.cpu_now_ns)
