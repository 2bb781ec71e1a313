"""The measurement of one operation: calibrate, warm up, sample, trace, verify.

The order matters:

1. **Calibrate** the loop count so that one sample lasts at least
   ``min_sample_ns`` (the clock's resolution and the loop's own cost then
   vanish); operations slower than that run once per sample.
2. **Warm up** at that loop count, untimed, so caches and lazy imports are
   settled before the first sample. Calibration's last run is at that loop
   count already and counts as the first warm-up. A later round of a run
   warms up on a third of the loop (:func:`later_warmup_loops`).
3. **Sample**: each sample is one timed loop (in a run's round, between
   two machine probes, and retaken when they say the machine was slow:
   :mod:`stratabench.engine.probe`); ``wall_ns`` and ``cpu_ns`` per
   operation are the loop's totals divided by the loop count. The thread's
   CPU time (``thread_cpu_ns``) and server CPU are read around the loop,
   outside it. How many samples: the stopping rule of
   :mod:`stratabench.engine.sampling` (adaptive by default, or ``--samples``).
   The rule judges the cell's judged metric (:attr:`Operation.judged_metric`):
   the thread's CPU time for work done in the thread, wall time for an
   operation that waits on files or servers.
   Before each sample, untimed, the operation's
   :attr:`~Operation.before_sample` runs when it has one (a store's
   periodic upkeep, which would otherwise fall inside the samples whose
   writes reach it, and so inside every sample or none as the loop count
   fell: docs/studies/cache.md §4).
   Before the first timed run, what lives is collected and frozen
   (``gc.freeze``); before each sample the collector runs, untimed. Every
   sample then starts from the same collector state over the operation's own
   objects: with the collector left as it was, a load of 100,000 records
   swung between two speeds (about 2×) depending on which samples a full
   collection fell into. Collections the operation itself causes stay
   inside the timer; the operation pays for its own garbage, not for the
   harness's heap.
4. **Trace memory** in a separate pass, because tracemalloc slows every
   allocation and would distort the timings. It runs first, before
   calibration, after exactly one untimed call (:data:`MEMORY_PASS_AFTER`):
   what an operation allocates or asks of the system can depend on how many
   calls came before it (a SQLite store flushes its journal every so many
   writes), so the pass must follow a fixed number of calls. After the
   sampling it followed the calibrated loop count, and
   ``cache set_list sqlite`` counted 176 or 352 syscalls from run to run.
   An operation with :attr:`~Operation.memory_in_child` traces in a child
   forked for the pass (:func:`_memory_pass_in_child`): the worker that
   samples then never ran tracemalloc, as a later round's never does. The
   pass's one call before it is then the calibration's first step (one
   operation, timed in the worker, whose first call it was either way),
   and the child, forked after it, makes only the traced call: a cell's
   first round makes one operation fewer (bulkload's 54 traced cells: their
   first calls took 1.3 s in all; two pairs of bulkload runs, main then
   this, ended round 0 at 17.7/16.6 and 17.6/18.6 s, the noise larger than
   the cut); but
   not in a worker that runs other threads
   (:func:`~stratabench.run_shared.single_threaded`: a child forked from a
   process with other threads inherits their locks and none of them, so a
   worker that started threads, pyarrow's pool after a Parquet read or
   write, traces in itself. The SIGSEGV once seen in ``parquet/table
   access`` is not this: it came in the worker as in a child, in a native
   thread, right after ``tracemalloc.stop()``: CPython gh-128679, fixed in
   3.12 and 3.13, not in 3.11).
   The pass's counts are exact, the same in every run of the same code:
   no other Python thread runs while it counts, and CPython's type cache,
   which kept names made afresh in the call alive as their addresses fell,
   is emptied at both ends (:func:`_alone` measured why). What it costs is
   the traced call: tracemalloc records every allocation and frees its
   record at every release, 2 to 13 times an untraced call (``json.dumps``
   of 10,000 records 23 ms, traced 297 ms). In a default run's round 0 the
   traced calls took 8.9 s (untraced 1.9 s: bulkload 5.5 s against 1.0,
   entities 2.9 against 0.65, cache 0.44 against 0.26), the whole pass
   13.9 s with its untimed calls and bulkload's children; the pass traces
   that one call, at one frame, and cannot be made cheaper without
   changing what it counts.
5. **Verify** one result outside every timed region (the memory pass's, when
   there is one).
"""

from __future__ import annotations

import gc
import itertools
import math
import os
import pickle
import sys
import threading
import time
import tracemalloc
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from stratabench.datasets.verify import Integrity
from stratabench.engine.clock import SYSTEM_CLOCK, Clock, LoopTimer
from stratabench.engine.operation import CellSpec, Operation
from stratabench.engine.probe import machine_probe, reference_loop, take_sample
from stratabench.engine.sampling import RoundPlan, Stop, StoppingRule
from stratabench.engine.statement import statement_timer
from stratabench.options import EngineOptions
from stratabench.results.records import CPU_METRIC, WALL_METRIC, CellResult, MetricResult, Retake, Status
from stratabench.results.stats import instability
from stratabench.run_shared import forked, single_threaded

__all__ = ["Measurement", "calibrate", "frozen_heap", "later_warmup_loops", "loop_timer", "measure_operation",
           "memory_pass", "process_cpu_ns"]

#: Never calibrate beyond this; an operation this cheap is measured well enough.
MAX_LOOPS = 1 << 30

#: Calibration scales a loop that fell short by its shortfall and this much to spare, at most by the step's cap.
CALIBRATION_SPARE = Fraction(21, 20)
CALIBRATION_MAX_STEP = Fraction(10)

#: Untimed calls before the memory pass: one settles lazy imports and caches, and a fixed
#: number keeps the pass's exact counts from depending on the calibrated loop count.
MEMORY_PASS_AFTER = 1


@dataclass
class Measurement:
    """Raw results of measuring one operation.

    Attributes
    ----------
    loops
        Operations per timed sample.
    samples
        Per-operation values of each metric, one per sample, keyed by metric name.
    integrity
        The verification outcome, or ``None`` when the operation has nothing to verify.
    stop
        Why sampling stopped (``None`` if nothing was sampled).
    judged
        The metric the cell is judged on (:attr:`Operation.judged_metric`).
    probe_ns
        The machine probe's figure around each kept sample (empty unprobed).
    retaken
        The samples set aside because the probe around them read slow.
    """

    loops: int
    samples: dict[str, list[float]] = field(default_factory=dict)
    integrity: Integrity | None = None
    stop: Stop | None = None
    judged: str = WALL_METRIC
    probe_ns: list[float] = field(default_factory=list)
    retaken: list[Retake] = field(default_factory=list)

    def flags(self, metrics: Mapping[str, MetricResult]) -> tuple[str, ...]:
        """Why the judged metric's median is not known to its target (empty when it is), with its figure."""
        judged = metrics.get(self.judged) or metrics.get(WALL_METRIC)
        if judged is None:
            return ()
        stop = self.stop
        return tuple(instability(judged.summary, target=stop.target if stop else None,
                                 target_missed=stop is not None and stop.target_missed,
                                 budget_s=stop.budget_s if stop and stop.reason == "budget" else None,
                                 metric=self.judged if self.judged in metrics else WALL_METRIC))

    def result(self, spec: CellSpec, *, notes: Mapping[str, Any] | None = None,
               duration_s: float | None = None) -> CellResult:
        """The result record of ``spec`` measured this way.

        The status is ``ok`` unless the integrity check failed; then it is
        ``failed``, with the first difference (or the two hashes) as the
        error. Metrics with no sample are left out, as not measured. An
        unstable judged metric is flagged (:meth:`flags`).
        """
        integrity = self.integrity
        status: Status = "ok"
        reason: str | None = None
        if integrity is not None and not integrity.ok:
            status = "failed"
            reason = f"integrity: {integrity.detail or 'hash ' + integrity.actual + ' != ' + integrity.expected}"
        metrics = {name: MetricResult.of(values) for name, values in self.samples.items() if values}
        return CellResult(
            suite=spec.suite,
            cell=spec.name,
            params=dict(spec.params),
            language=spec.language,
            status=status,
            error=reason,
            loops=self.loops,
            metrics=metrics,
            integrity=integrity,
            notes=dict(notes or {}),
            duration_s=duration_s,
            flags=self.flags(metrics),
            group=spec.group,
            judged=self.judged if self.judged in metrics else None,
            probe_ns=tuple(self.probe_ns),
            retaken=tuple(self.retaken),
        )


def loop_timer(call: Callable[[], object], clock: Clock = SYSTEM_CLOCK) -> LoopTimer:
    """A timed loop around ``call``: the smallest loop Python offers.

    ``itertools.repeat`` avoids creating an int per iteration, as
    :mod:`timeit` does; the counters are bound to locals so that reading
    them costs as little as possible inside the timed region.
    """
    wall, cpu, repeat = clock.wall_ns, clock.cpu_ns, itertools.repeat

    def timed(loops: int) -> tuple[int, int]:
        iterations = repeat(None, loops)
        cpu0 = cpu()
        wall0 = wall()
        for _ in iterations:
            call()
        wall1 = wall()
        cpu1 = cpu()
        return wall1 - wall0, cpu1 - cpu0

    return timed


def calibrate(timed: LoopTimer, min_sample_ns: int, max_loops: int = MAX_LOOPS, *, on_cpu: bool = False,
              first: tuple[int, int] | None = None) -> int:
    """The smallest loop count whose loop lasts at least ``min_sample_ns``.

    Starts at one operation and scales the loop by the measured shortfall
    (with 5% to spare, at most 10× a step, so one outlier cannot overshoot by
    much), so the loop that reaches the length lasts about 1.05× of it. The
    loop count is scaled, not its growth factor rounded up to a whole number:
    a factor of 2× at least, and rounded up, made loops that lasted up to 2×
    the length, and every round's warm-up and sample of the cell paid that
    overshoot: ``run cache``'s cells sampled 1.42× and 1.50× the length at
    the median, 1.09× and 1.07× scaled (two pairs under one lock); two whole
    default runs, 1.14× and 1.27× before, 1.09× and 1.07× after, took 228.5
    and 208.0 s before, 216.9 and 197.1 s after. The calibration loops also
    warm the operation up.

    A loop count is fixed for the whole run (every round times the one the
    cell's first round calibrated), so one descheduled step must not fix it:
    a step during which the host took the CPU away lasts long on the wall
    clock, and on wall time alone it stopped the growth at a loop of one for
    the whole run. So a step's wall time stops the growth only when a second
    timing of the same loop count reaches the length too (a pause seldom
    hits two loops in a row; if the second falls short, the growth goes on
    from it). With ``on_cpu`` (a cell judged on CPU time: work inside the
    process, which a pause of the host leaves out), a step whose CPU time
    reaches the length stops it at once and the growth follows CPU time;
    wall time, confirmed, still bounds an operation that mostly waits.
    Except the first step: one call, and in a worker whose memory pass ran
    in a child, the worker's first call of the operation, which pays the
    one-off costs on CPU time too (a library's initialisation, a thread
    pool's start). Stopped there, a loop of one was timed in every round:
    bulkload's ``parquet/table``, ``parquet/table access``, ``parquet/table
    read`` and ``arrow/table read`` sampled 2-7 ms against their 30 ms (a
    warm call is that short) in six of six default runs, and were flagged
    in five or six. So a first step that reaches the length on CPU time is
    timed again too. Three paired ``run bulkload`` under the lock: their
    loops became 7-34 (11-12 for ``arrow/table read``) and their medians
    0.31-0.79 of the loop of one (a cold call's costs no longer in every
    sample), so the study's figures for them move. Their flags did not go:
    the three parquet cells stay flagged, their thread CPU spread ±10-65%
    (pyarrow's pool shares the work, and the calling thread's CPU time
    leaves it out); in the pair with this change alone, 11 and 17 of the 55
    Python cells were flagged (the second run on a busier machine: 48
    visits retaken against 23).

    ``first`` is the first step's timing (one operation) when the caller
    has already taken it.
    """
    loops = 1
    reached: int | None = None  # the loop count whose time reached the length once, to be timed again
    while loops < max_loops:
        # ``first``: the caller timed the first step, one operation, itself (measure_operation says why).
        wall, cpu = timed(loops) if first is None else first
        first = None
        if on_cpu and cpu >= min_sample_ns:
            if loops > 1 or reached == loops:
                break
            reached = loops  # the operation's first call, maybe the worker's first: it may have been cold
            continue
        if wall >= min_sample_ns:
            if reached == loops:
                break
            reached = loops
            continue
        length = cpu if on_cpu else wall
        # Exact fractions: in floats, 10 loops × (100 µs / 30 µs) × 1.05 came out a hair above 35, and made 36.
        scale = min(CALIBRATION_MAX_STEP, Fraction(min_sample_ns) / Fraction(length) * CALIBRATION_SPARE) \
            if length > 0 else CALIBRATION_MAX_STEP
        loops = min(max_loops, max(loops + 1, math.ceil(loops * scale)))
    return loops


#: A later round's warm-up runs this share of the loop (at least one operation), not the whole loop.
LATER_WARMUP_SHARE = 3


def later_warmup_loops(loops: int) -> int:
    """The warm-up of a round after a cell's first: a third of its calibrated loop, at least one operation.

    A worker forked for a later round starts from the zygote, as the first
    did, so its first calls pay the same one-off costs (copy-on-write pages,
    a library's caches, the allocator's arenas); the first round's
    calibration showed the loop count, so the warm-up need not search for it.
    Measured on this project's machine over 40 cells of bulkload, cache and
    entities (four samples each in a fresh fork): the first sample after a
    warm-up of a third of the loop was 0.6% above the later three at the
    median (0.3% after a whole loop, 1.9% after an eighth, 3.4% and up to 5×
    for parquet and arrow without one). The whole loop cost a visit as much
    as its sample, in every round of every cell.
    """
    return max(1, -(-loops // LATER_WARMUP_SHARE))


#: Linux's per-thread scheduler statistics: on-CPU nanoseconds, where psutil's
#: cpu_times() counts clock ticks (10 ms), too coarse for samples of tens of ms.
_SCHEDSTAT = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/schedstat")


def _schedstat_ns(pid: int) -> int | None:
    """On-CPU nanoseconds of every live thread of ``pid``; ``None`` if the process is gone."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    total = 0
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as file:
                total += int(file.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended between the listing and the read
    return total


def process_cpu_ns(pids: Sequence[int]) -> int | None:
    """User+system CPU of the given processes (every live thread), or ``None`` if any is unknown.

    Nanoseconds from Linux's scheduler statistics where there are some, else
    psutil's clock ticks. Used for ``server_cpu_ns`` and by studies that read
    a server's CPU around their own runs.
    """
    if not pids:
        return None
    if _SCHEDSTAT:
        total_ns = 0
        for pid in pids:
            value = _schedstat_ns(pid)
            if value is None:
                return None
            total_ns += value
        return total_ns
    import psutil

    total = 0.0
    try:
        for pid in pids:
            times = psutil.Process(pid).cpu_times()
            total += times.user + times.system
    except psutil.Error:
        return None
    return int(total * 1e9)


#: Whether the heap is frozen now (by the zygote, or by an enclosing :func:`frozen_heap`).
_frozen = False


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Collect, then freeze what lives now (``gc.freeze``) until the block ends.

    The collector then traverses only objects made inside the block. On exit
    the heap is unfrozen only if nothing was frozen before: a zygote's child
    starts with the zygote's imports frozen, and unfreezing would hand them
    back to every later collection of the cell (about 50 ms each here).
    """
    global _frozen
    was_frozen = _frozen
    freeze_for_children()
    try:
        yield
    finally:
        if not was_frozen:
            gc.unfreeze()
            _frozen = False


def freeze_for_children() -> None:
    """Collect and freeze the heap, for good in a process that forks workers (the zygote).

    :func:`frozen_heap` then knows without asking: ``gc.get_freeze_count()``
    walks every frozen object, 17 ms for a zygote's imports, twice a cell.
    """
    global _frozen
    gc.collect()
    gc.freeze()
    _frozen = True


def memory_pass(call: Callable[[], object]) -> tuple[dict[str, float], object]:
    """Trace one operation's memory; return the metrics and its result.

    ``alloc_bytes`` is the tracemalloc peak over the baseline during the
    operation, ``retained_bytes`` what stays allocated with its result
    alive, ``allocs`` the memory blocks that stay live with it, both after
    a collection, and ``syscalls`` the read and write system calls its
    thread made (exact, where ``/proc/thread-self/io`` exists: :func:`io_syscalls`).
    tracemalloc keeps its own records with the raw allocator,
    outside the blocks ``sys.getallocatedblocks`` counts, so one traced
    call gives all three (an untraced second call counted the same blocks).

    The counts are the calling thread's own and the same in every run of
    the same code (:func:`_alone` says how): CPython's type cache is emptied
    before the call and again before what stays is read, and no other
    Python thread runs between the two readings.
    """
    # What was alive before the pass (the cell's dataset, a hundred thousand
    # records in bulkload) cannot be the pass's garbage: freezing it keeps the
    # collection below to the objects the call made.
    with frozen_heap():
        # Read outside the counted window: reading the counters allocates, the tracer's calls make no syscall, and
        # the read releases the GIL, which would let another thread run inside it. Read before the blocks are
        # counted, and only their difference kept after: the process's own count is an int object of its own from
        # 257 on (a small one is shared), so holding it counted a block or not as the process had made fewer
        # syscalls (a child forked for the pass) or more (a worker) before the pass.
        syscalls_before = io_syscalls()
        with _alone():
            # Collected again after the other threads' last turn: a full collection also empties the free lists
            # (floats, tuples, lists, dicts), which their turns and the counters' reading refilled by a few blocks.
            gc.collect()
            sys._clear_type_cache()
            blocks_before = sys.getallocatedblocks()
            tracemalloc.start()
            try:
                baseline, _ = tracemalloc.get_traced_memory()
                tracemalloc.reset_peak()
                result = call()
                gc.collect()
                sys._clear_type_cache()
                # Both in one reading, after the collection: a peak read before it fell below what stayed by
                # 16 bytes in a CI run (the reading's own objects and the collection's were traced after it).
                current, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            blocks_after = sys.getallocatedblocks()
        syscalls = _syscalls_since(syscalls_before)
    metrics = {
        "alloc_bytes": float(peak - baseline),
        "retained_bytes": float(current - baseline),
        "allocs": float(blocks_after - blocks_before),
    }
    if syscalls is not None:
        metrics["syscalls"] = float(syscalls)
    return metrics, result


#: The switch interval while the memory pass counts: longer than any traced call of a run (about 1 s at most).
_ALONE_INTERVAL_S = 5.0


@contextmanager
def _alone() -> Iterator[None]:
    """Keep every other Python thread off the GIL (so off Python's allocators) until the block ends.

    Another thread's blocks land in ``sys.getallocatedblocks`` and in
    tracemalloc's figures as the calling thread's: a thread that allocates
    beside the pass moved its counts by whatever it made in its turns,
    one every switch interval (5 ms). With the interval longer than the
    pass, a thread waiting for the GIL asks for it only after that long,
    so inside the block none runs unless the operation itself blocks (I/O,
    a lock): an operation that waits on another thread still gets its work
    done (a thread that then never blocks holds the GIL for up to the
    interval: none does in a run's workers). The interval of a thread already waiting was read before it was
    raised, so the GIL is let go once per other thread first: each wakes,
    runs or not, and waits again with the longer one. Threads outside
    Python (gRPC's pollers, pyarrow's pool) never take Python's small-object
    allocator, whose blocks are what ``allocs`` counts.

    The type cache (CPython 3.11 ``_PyType_Lookup``) keeps the name of each
    attribute looked up, in a slot chosen by the name's address; a name
    made afresh at every lookup (``PyObject_CallMethod`` with a C string:
    an aware ``datetime``'s ``timetuple()`` asks its zone's ``dst`` so) is
    then kept alive by the cache or not as its address falls, and the cell
    ``entities encode mixed/100 model datastore.to_message`` counted 76 to
    141 blocks in runs of identical code (87 in every run with the cache
    emptied around the count). :func:`memory_pass` empties it at both ends.
    """
    interval = sys.getswitchinterval()
    sys.setswitchinterval(_ALONE_INTERVAL_S)
    try:
        for _ in range(threading.active_count() - 1):
            time.sleep(0)  # lets the GIL go: a thread waiting with the old interval wakes and waits with the new one
        yield
    finally:
        sys.setswitchinterval(interval)


def _syscalls_since(before: int | None) -> int | None:
    """Read and write system calls made since :func:`io_syscalls` read ``before``, less that reading's own."""
    after = io_syscalls()
    return None if before is None or after is None else after - before - _SYSCALLS_READING


def _memory_pass_first(op: Operation, options: EngineOptions,
                       made: int = 0) -> tuple[dict[str, list[float]], Integrity | None]:
    """The memory pass of ``op`` after :data:`MEMORY_PASS_AFTER` untimed calls, ``made`` of them made already, and
    its last result verified.

    It runs before calibration, so its exact counts never depend on how
    many calls the calibration chose (the module docstring says why); the
    result is verified at once, so it is not held alive through the sampling.
    """
    for _ in range(MEMORY_PASS_AFTER - made):
        if op.before_each is not None:
            op.before_each()
        op.call()
    memory: dict[str, list[float]] = {}
    result: object = None
    for _ in range(options.memory_samples):
        if op.before_each is not None:
            op.before_each()
        values, result = memory_pass(op.call)
        for name, value in values.items():
            memory.setdefault(name, []).append(value)
    return memory, op.verify(result) if op.verify is not None else None


def _memory_pass_in_child(op: Operation, options: EngineOptions,
                          made: int = 0) -> tuple[dict[str, list[float]], Integrity | None]:
    """:func:`_memory_pass_first` in a child forked for it, its figures and verdict sent back through a pipe.

    tracemalloc, and the calls around it, leave the worker's allocators in
    another state than a later round's worker has (glibc's dynamic mmap
    threshold rises with the blocks the pass frees; Python's small-object
    arenas are laid out otherwise): the exact page faults of one load of
    bulkload's json/typed were 130 after the pass and 1,418 in a later
    round, and round 0 timed 5-35% faster. The child starts from the
    worker's state, so its figures are those the worker would have counted;
    it exits at once (``os._exit``: no exit handler, no cleanup of what the
    worker owns), and the worker goes on as if the pass had never run.

    Raises
    ------
    BaseException
        What the operation raised in the child (or, when that cannot be
        pickled, a ``RuntimeError`` naming it).
    MemoryChildDied
        When the child ended without an answer (killed by a signal).
    """
    reading, writing = os.pipe()

    def send() -> int:
        os.close(reading)
        outcome: tuple[str, object]
        try:
            outcome = ("figures", _memory_pass_first(op, options, made))
        except BaseException as error:  # noqa: BLE001 - whatever it is, the worker raises it
            traceback.print_exc()
            outcome = ("raised", error)
        try:
            payload = pickle.dumps(outcome)
            pickle.loads(payload)  # an exception whose class takes other arguments pickles but does not load
        except Exception:  # noqa: BLE001 - an exception that does not pickle is sent by its text
            payload = pickle.dumps(("raised", RuntimeError(f"the memory pass raised {outcome[1]!r}")))
        with os.fdopen(writing, "wb") as pipe:
            pipe.write(payload)
        return 0

    pid = forked(send)
    os.close(writing)
    with os.fdopen(reading, "rb") as pipe:
        payload = pipe.read()
    _, status = os.waitpid(pid, 0)
    if not payload:
        raise MemoryChildDied(f"the memory pass's child ended without its figures (exit {os.waitstatus_to_exitcode(status)})")
    kind, value = pickle.loads(payload)
    if kind == "raised":
        raise value
    figures: tuple[dict[str, list[float]], Integrity | None] = value
    return figures


class MemoryChildDied(RuntimeError):
    """The memory pass's child ended on a signal without sending its figures."""


def _memory_pass_retried(op: Operation, options: EngineOptions,
                         made: int = 0) -> tuple[dict[str, list[float]], Integrity | None]:
    """:func:`_memory_pass_in_child`, a second child when the first died on a signal, with a note saying so.

    The one crash seen (``parquet/table access``, SIGSEGV, about one visit in
    240 of the arrow and parquet cells' first rounds) is CPython gh-128679:
    ``tracemalloc.stop()`` races with ``PyTraceMalloc_Track`` in pyarrow's
    native threads, unfixed in 3.11. It kills only the child, whose figures
    are a pass of the same code from the same state, so a second child gives
    the same figures; the note keeps the crash visible. A second death fails
    the cell, as before.
    """
    try:
        return _memory_pass_in_child(op, options, made)
    except MemoryChildDied as died:
        op.notes["memory_pass_retried"] = f"{died}; a second child measured it (CPython gh-128679 in 3.11)"
        return _memory_pass_in_child(op, options, made)


def io_syscalls() -> int | None:
    """Read and write system calls the calling thread has made (``/proc/thread-self/io`` syscr + syscw).

    The thread's, not the process's (``/proc/self/io`` sums every thread):
    a cell's worker may hold threads of its own, and their reads and writes
    fall inside the pass or not as they happen to run. The ndb client's gRPC
    threads made ``entities get20 sqlite mixed/100 expando ndb.get read=0``
    count 0 or 1 syscall in two runs of identical code. What another thread
    does for the operation (gRPC's socket I/O, pyarrow's reader pool) is then
    not counted: the figure is the calling thread's own. ``None`` off Linux.
    """
    try:
        with open("/proc/thread-self/io", "rb") as file:
            fields = dict(line.split(b":", 1) for line in file.read().splitlines() if b":" in line)
        return int(fields[b"syscr"]) + int(fields[b"syscw"])
    except (OSError, KeyError, ValueError):
        return None


def _reading_cost() -> int:
    """The syscalls one reading of ``/proc/thread-self/io`` adds to the next (its own read): taken off every figure."""
    first, second = io_syscalls(), io_syscalls()
    return 0 if first is None or second is None else second - first


_SYSCALLS_READING = _reading_cost()


def _round_stop(plan: RoundPlan, walls: Sequence[float], spent_ns: int, options: EngineOptions) -> Stop | None:
    """A round takes exactly its samples, fewer only when they already outlast ``max_sample_ns``; the run judges."""
    if len(walls) >= plan.samples or (walls and spent_ns >= options.max_sample_ns):
        return Stop("fixed")
    return None


def measure_operation(op: Operation, options: EngineOptions, clock: Clock = SYSTEM_CLOCK,
                      plan: RoundPlan | None = None, probe_work: Callable[[], object] = reference_loop) -> Measurement:
    """Measure ``op`` as the module docstring describes.

    Parameters
    ----------
    op
        What to measure, built by a suite (or by :func:`stratabench.measure`).
    options
        Sampling, warm-ups, calibration target and memory pass; the
        operation's own :attr:`~Operation.engine`, when set, replaces them.
    clock
        The counters to read; tests pass a fake one.
    plan
        One round of a run (:mod:`stratabench.engine.rounds`): exactly its
        samples, at its loop count when given (calibrated otherwise), and
        the memory pass, verification and once-measured metrics only in the
        cell's first round. ``None``: the whole measurement here, sampling
        until the stopping rule says so. With its ``probe_median_ns`` each
        sample is taken between two machine probes and retaken when they
        read slow (:func:`~stratabench.engine.probe.take_sample`).
    probe_work
        The probe's work (tests drive the probe's readings with it).
    """
    if op.engine is not None:
        options = op.engine
    first = plan is None or plan.first
    memory: dict[str, list[float]] = {}
    integrity: Integrity | None = None
    calibrating = op.before_each is None and (plan is None or plan.loops is None)
    traced = first and op.trace_memory and options.memory_samples > 0
    # A pass in a child after the calibration's first step (one operation, the pass's one call before it, made in
    # the worker and inherited by the child): the worker's first call was cold either way.
    child_after_first_step = (traced and op.memory_in_child and calibrating and op.statement is None
                              and MEMORY_PASS_AFTER == 1 and single_threaded())
    if traced and not child_after_first_step:
        if op.memory_in_child and single_threaded():
            memory, integrity = _memory_pass_retried(op, options)
        else:
            memory, integrity = _memory_pass_first(op, options)
    if op.statement is not None:
        stmt, setup = op.statement
        timed = statement_timer(stmt, setup, op.namespace, clock)
    else:
        timed = loop_timer(op.call, clock)

    with frozen_heap():
        warmups = options.warmups
        warm_loops: int | None = None  # the warm-up's loop count, if not the samples'
        if op.before_each is not None:
            # Each operation needs a fresh state, so each sample is one operation.
            loops = 1
        elif plan is not None and plan.loops is not None:
            loops = plan.loops  # calibrated in the cell's first round: every round's samples time the same loop
            warm_loops = later_warmup_loops(loops)
        else:
            first_step = None
            if child_after_first_step:
                first_step = timed(1)
                memory, integrity = _memory_pass_retried(op, options, made=1)
            loops = calibrate(timed, options.min_sample_ns, on_cpu=op.judged_metric == CPU_METRIC, first=first_step)
            # Calibration ends with an untimed run of exactly ``loops`` operations
            # (the one that reached the sample length): that run is a warm-up, and
            # another would only cost a sample's time in every cell.
            warmups = max(0, warmups - 1)
        measurement = Measurement(loops=loops, judged=op.judged_metric)
        for _ in range(warmups):
            if op.before_each is not None:
                op.before_each()
            timed(loops if warm_loops is None else warm_loops)

        walls: list[float] = []
        cpus: list[float] = []
        threads: list[float] = []
        server: list[float] = []
        spent = 0
        rule = StoppingRule(options)
        # The rule judges the metric the cell is judged on: the thread's CPU time unless the operation waits.
        judged = threads if measurement.judged == CPU_METRIC else walls

        def prepare() -> None:
            if op.before_each is not None:
                op.before_each()
            if op.before_sample is not None:
                op.before_sample()
            gc.collect()

        def sample() -> dict[str, float]:
            """One timed loop: its metrics per operation (wall, CPU, thread CPU, the servers' CPU when known)."""
            server_before = process_cpu_ns(op.server_pids)
            # Read around the timed loop, not inside it: one more counter per sample, not per operation.
            thread_before = clock.thread_cpu_ns()
            wall, cpu = timed(loops)
            thread_after = clock.thread_cpu_ns()
            server_after = process_cpu_ns(op.server_pids)
            values = {"wall_ns": wall / loops, "cpu_ns": cpu / loops, "thread_cpu_ns": (thread_after - thread_before) / loops}
            if server_before is not None and server_after is not None:
                values["server_cpu_ns"] = (server_after - server_before) / loops
            return values

        probe_median = plan.probe_median_ns if plan is not None else None
        probe = machine_probe(clock, probe_work) if probe_median is not None else None
        while (stop := _round_stop(plan, walls, spent, options) if plan is not None else rule.stop(judged, spent)) is None:
            if probe is None or probe_median is None:
                prepare()
                values = sample()
            else:
                taken = take_sample(sample, probe, probe_median, clock, prepare)
                values = taken.kept
                measurement.probe_ns.append(taken.probe_ns)
                measurement.retaken.extend(Retake(plan.number if plan is not None else None, figure, probe_median,
                                                  aside) for aside, figure in taken.set_aside)
            spent += int(values["wall_ns"] * loops)
            walls.append(values["wall_ns"])
            cpus.append(values["cpu_ns"])
            threads.append(values["thread_cpu_ns"])
            if "server_cpu_ns" in values:
                server.append(values["server_cpu_ns"])
    measurement.stop = stop
    measurement.samples["wall_ns"] = walls
    measurement.samples["cpu_ns"] = cpus
    measurement.samples["thread_cpu_ns"] = threads
    if server and len(server) == len(walls):
        measurement.samples["server_cpu_ns"] = server

    if not first:
        return measurement
    measurement.samples.update(memory)
    measurement.integrity = integrity
    if op.verify is not None and integrity is None:
        if op.before_each is not None:
            op.before_each()
        measurement.integrity = op.verify(op.call())
    if op.size_bytes is not None:
        measurement.samples["size_bytes"] = [float(op.size_bytes)]
    for name, value in {**op.extra, **(op.extra_of() if op.extra_of is not None else {})}.items():
        measurement.samples[name] = [float(value)]
    return measurement
