"""``python -m stratabench.engine.count_worker - RESULT``: count one cell under callgrind (the worker's side).

:mod:`stratabench.engine.counting` starts this module under ``valgrind
--tool=callgrind --dump-before=_PyEval_GetSwitchInterval``: each call of
``sys.getswitchinterval()`` (whose C function that is, and which nothing
else calls) ends a segment, and callgrind writes the segment's counts to
``OUT.1``, ``OUT.2``, ... The worker prepares the cell as a timed worker
does (:func:`stratabench.engine.cell.run_cell_in_process`), then:

1. marks the end of start-up, imports and set-up (segment 1, ignored);
2. runs one operation, cold (segment 2), and reads its count: it sets how
   many operations warm up (up to 8, since the specialising interpreter
   rewrites a code object after a few runs) and a first N;
3. warms up (segment 3, with the reading of segment 2: ignored);
4. runs N operations (segment 4), then 2N (segment 5). Both segments start
   and end alike (a marker's return, a collection, a marker's call), so
   segment 5 minus segment 4 is N operations and, up to a few hundred
   instructions, nothing else;
5. while that difference counts fewer than :data:`TARGET_INSTRUCTIONS`,
   N grows to reach it and step 4 runs again, at most :data:`MAX_PASSES`
   times in all; the reading of the dumps before it ends in a segment of its
   own (6, ignored; then 7 and 8).

Why step 5: the one cold operation's count is mostly the loop's own
once-per-loop cost (a collection, the clocks, the first call), so for a
cheap operation the first N is far too small. For ``pass`` (74 instructions
a loop on Python 3.11) it was 58 operations, 4,300 instructions, and what
the harness around the loop does not do alike twice (the specialising
interpreter retrying an instruction of its own, after a back-off, in one
segment and not the other: 200-700 instructions, measured) came out as
84.0 instructions a loop. Differenced over 5 million instructions, the same
leftover weighs under 0.02%.

Before each marker the collector runs, as before each timed sample; the
heap is frozen as when timing (:func:`stratabench.engine.measure.frozen_heap`).
A segment more than expected means something else called the marker, and
the count is refused rather than misread; so is a Python whose symbols
callgrind cannot see (a stripped build).
"""

from __future__ import annotations

import gc
import math
import os
import sys
from pathlib import Path

from stratabench.engine.clock import SYSTEM_CLOCK, Clock
from stratabench.engine.counting import MARKER_FUNCTION, OUT_VARIABLE
from stratabench.engine.measure import MAX_LOOPS, Measurement, frozen_heap, loop_timer
from stratabench.engine.operation import Operation
from stratabench.engine.statement import statement_timer
from stratabench.engine.worker import worker_main
from stratabench.errors import UncountableError
from stratabench.options import EngineOptions

__all__ = ["MAX_PASSES", "TARGET_INSTRUCTIONS", "count_operation", "dump_events", "estimated_cycles"]

#: N is chosen so that N operations count at least this many instructions: the loop's own cost and a
#: collection's alignment then weigh less than 0.1% of the difference.
TARGET_INSTRUCTIONS = 5_000_000

#: Warm-up: up to this many operations, and no more than this many instructions' worth.
WARMUP_OPS, WARMUP_INSTRUCTIONS = 8, 10_000_000

#: Passes of N and 2N operations, at most: a second reaches the target from the first's count.
MAX_PASSES = 3

#: A pass's N is at most this many times the one before.
MAX_GROWTH = 10_000


def estimated_cycles(events: dict[str, float]) -> float:
    """Cycles estimated from callgrind's cache events, by the formula the ``est_cycles`` metric states."""
    accesses = events.get("Ir", 0) + events.get("Dr", 0) + events.get("Dw", 0)
    l1_misses = events.get("I1mr", 0) + events.get("D1mr", 0) + events.get("D1mw", 0)
    ram = events.get("ILmr", 0) + events.get("DLmr", 0) + events.get("DLmw", 0)
    return (accesses - l1_misses) + 5 * (l1_misses - ram) + 35 * ram


def dump_events(dump: Path) -> dict[str, float]:
    """The counts of one callgrind dump, by event name (``Ir``, ``Dr``...)."""
    names: list[str] = []
    values: list[str] = []
    for line in dump.read_text().splitlines():
        if line.startswith("events:"):
            names = line.split()[1:]
        elif line.startswith(("summary:", "totals:")):
            values = line.split()[1:]
            break
    # callgrind leaves trailing zero counts out of the line.
    return {name: float(values[i]) if i < len(values) else 0.0 for i, name in enumerate(names)}


class _Segments:
    """The worker's segments, ended by markers, and the counts callgrind dumped for each."""

    def __init__(self, out_file: Path) -> None:
        self.out_file = out_file
        self.ended = 0

    def end(self) -> None:
        gc.collect()
        sys.getswitchinterval()
        self.ended += 1

    def check(self) -> None:
        """Refuse the count when the segments callgrind dumped are not the ones ended here."""
        if self.dump(self.ended + 1).exists() or not self.dump(self.ended).exists():
            raise UncountableError(f"the count was disturbed: something in this cell also calls "
                                   f"sys.getswitchinterval (callgrind's marker, {MARKER_FUNCTION})")

    def difference(self) -> dict[str, float]:
        """The counts of the last segment minus those of the one before (2N operations minus N)."""
        single, double = self.events(self.ended - 1), self.events(self.ended)
        return {name: double[name] - single.get(name, 0.0) for name in double}

    def dump(self, segment: int) -> Path:
        return self.out_file.with_name(f"{self.out_file.name}.{segment}")

    def events(self, segment: int) -> dict[str, float]:
        """The counts of one ended segment, by event name (``Ir``, ``Dr``...)."""
        return dump_events(self.dump(segment))


def count_operation(op: Operation, options: EngineOptions, clock: Clock = SYSTEM_CLOCK) -> Measurement:
    """Count ``op``'s instructions and estimated cycles per operation, as the module docstring describes.

    Raises
    ------
    UncountableError
        For an operation that needs a fresh state before each call, when
        not under callgrind, or when the markers were not seen as planned.
    """
    if op.before_each is not None:
        raise UncountableError("this cell needs a fresh state before each operation, which a count cannot set apart "
                               "from the operation; time it instead (run without --count)")
    out = os.environ.get(OUT_VARIABLE)
    if not out:
        raise UncountableError(f"not under callgrind: {OUT_VARIABLE} is not set (stratabench --count starts this worker)")
    segments = _Segments(Path(out))
    if op.statement is not None:
        # One compile: a count is of the loop's instructions, which do not move with where its code lands.
        timed = statement_timer(*op.statement, op.namespace, clock, fresh=False)
    else:
        timed = loop_timer(op.call, clock)
    with frozen_heap():
        segments.end()
        if not segments.dump(1).exists():
            raise UncountableError(f"callgrind cannot see {MARKER_FUNCTION} in {sys.executable} (a stripped build): "
                                   "count with a Python that keeps its symbols (pyenv's, uv's)")
        timed(1)
        segments.end()
        cold = max(1.0, segments.events(2).get("Ir", 0.0))
        loops = max(1, math.ceil(TARGET_INSTRUCTIONS / cold))
        timed(max(1, min(WARMUP_OPS, math.floor(WARMUP_INSTRUCTIONS / cold))))
        segments.end()
        for done in range(MAX_PASSES):
            if done:  # the reading of the last pass's dumps ends in a segment of its own, ignored
                segments.end()
            double = 2 * loops  # before the segments: the harness does the same in both
            timed(loops)
            segments.end()
            timed(double)
            segments.end()
            segments.check()
            difference = segments.difference()
            counted = difference.get("Ir", 0.0)
            if counted >= TARGET_INSTRUCTIONS or loops >= MAX_LOOPS or done == MAX_PASSES - 1:
                break  # the difference and its N stay together
            # 10% over what the target asks for, so the next pass reaches it despite the leftover; never more
            # than MAX_GROWTH× (a loop costs some 70 instructions at least, so a count below that is a leftover).
            growth = TARGET_INSTRUCTIONS * 1.1 / max(1.0, counted)
            loops = min(MAX_LOOPS, max(2 * loops, math.ceil(loops * min(MAX_GROWTH, growth))))
    measurement = Measurement(loops=loops)
    measurement.samples["instructions"] = [difference.get("Ir", 0.0) / loops]
    measurement.samples["est_cycles"] = [estimated_cycles(difference) / loops]
    if op.verify is not None:
        measurement.integrity = op.verify(op.call())
    if op.size_bytes is not None:
        measurement.samples["size_bytes"] = [float(op.size_bytes)]
    return measurement


if __name__ == "__main__":
    sys.exit(worker_main(sys.argv[1:], measure=count_operation))
