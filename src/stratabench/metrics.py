"""The table of metrics: every metric's name, unit, direction and formatter.

Names are stable: result files, reports and ``compare`` key on them. A metric
not in this table is refused when a result is recorded, so a typo cannot
create a new column silently.

Some metrics are exact: counted, not timed (instructions under callgrind,
bytes stored, SQL statements, allocations, syscalls). Measuring the same code
twice gives the same figure, or one within a small stated tolerance, whatever
the machine is doing. Such a metric declares its tolerance here, once, and
``compare`` and ``ab`` judge it by that tolerance alone: a change beyond it is
a change, named, never put through a statistical test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from stratabench.errors import StratabenchError
from stratabench.units import format_bytes, format_count, format_ns

__all__ = ["METRICS", "Metric", "metric"]


@dataclass(frozen=True)
class Metric:
    """One measured quantity.

    Attributes
    ----------
    name
        Stable identifier, unit included (``wall_ns``).
    unit
        ``ns``, ``bytes`` or ``count``.
    better
        Which direction is an improvement.
    description
        One line, shown in ``--help`` and report legends.
    tolerance
        For an exact metric, the largest relative difference between two
        measurements of the same code (0: none at all); a change beyond it
        is a change. ``None`` for a sampled metric (a time), which only a
        statistical test can judge.
    slack
        For an exact metric, an absolute difference that is never a change,
        whatever the relative one (a few live blocks of a small count).
    """

    name: str
    unit: Literal["ns", "bytes", "count", "ops/s"]
    better: Literal["lower", "higher"]
    description: str
    tolerance: float | None = None
    slack: float = 0.0

    @property
    def exact(self) -> bool:
        """Whether the metric is counted rather than sampled, and so judged by its tolerance."""
        return self.tolerance is not None

    def beyond_tolerance(self, before: float, after: float) -> bool:
        """Whether two values of this exact metric differ by more than its tolerance (relative to ``before``)."""
        if self.tolerance is None:
            raise ValueError(f"{self.name} is sampled, not exact: compare it with a statistical test")
        if before == after or abs(after - before) <= self.slack:
            return False
        return before == 0 or abs(after - before) > self.tolerance * abs(before)

    @property
    def tolerance_text(self) -> str:
        """The tolerance as said in reports: ``1.0%``, or ``10.0% or 64 blocks`` with a slack."""
        relative = f"{self.tolerance or 0:.1%}"
        return f"{relative} or {self.slack:g} {'blocks' if self.name == 'allocs' else self.unit}" if self.slack else relative

    @property
    def change_words(self) -> tuple[str, str]:
        """The words for a rise and a fall of this metric: ``slower``/``faster`` for a time, ``more``/``fewer`` for a count."""
        if self.unit == "ns":
            return "slower", "faster"
        if self.unit == "ops/s":
            return "faster", "slower"
        if self.unit == "count":
            return "more", "fewer"
        return "larger", "smaller"

    @property
    def format(self) -> Callable[[float | None], str]:
        """The formatter for one value of this metric."""
        return {"ns": format_ns, "bytes": format_bytes}.get(self.unit, format_count)


_ALL = [
    Metric("wall_ns", "ns", "lower", "elapsed time per operation (perf_counter)"),
    Metric("cpu_ns", "ns", "lower", "this process's user+system CPU per operation"),
    Metric("thread_cpu_ns", "ns", "lower", "the measuring thread's CPU per operation (thread_time): leaves out the time "
           "the host took away, and work of other threads and processes"),
    Metric("server_cpu_ns", "ns", "lower", "user+system CPU of the local server process(es) per operation"),
    Metric("alloc_bytes", "bytes", "lower", "peak bytes allocated during one operation (tracemalloc pass)"),
    Metric("retained_bytes", "bytes", "lower", "bytes still allocated after one operation and a collection, result alive"),
    # Live blocks are counted once, in one worker of the cell's first round, and what else lives then moves
    # them. Four default runs of identical code (331 cells): 256 cells gave one count in all four, 63 moved
    # by 1 to 18 blocks, and 12 of the entities' ndb and datastore cells by 20 to 80 (1,345 to 1,424; 22 to
    # 72). A rule of 1% named 38 cells between two of them; 16 blocks or 10%, 0 to 3 of each of the 6
    # pairs; 64 blocks or 10%, none. A leak that keeps more than that per operation still shows.
    # Most of that was CPython's type cache keeping names made afresh in the call, and another thread's turns
    # (engine/measure.py, _alone): with both kept out of the count, two default runs of identical code gave one
    # count in all 331 cells (31 moved between two runs of the code before). The tolerance stays until more
    # runs agree.
    Metric("allocs", "count", "lower", "memory blocks still allocated after one operation, result alive",
           tolerance=0.10, slack=64),
    # Go's benchmark averages over its b.N loops, and an encoder whose buffers come from a sync.Pool (which
    # every collection empties) allocates per op what the collections during those loops made it: between
    # default runs of identical code, segmentio-json/encode gave 39 B and 705.6 kB per op (1 and 3
    # allocations), bson/encode 5.3 MB and 2.4 MB, go-json/encode 480.1 kB and 1.3 MB. So they are
    # sampled, one value per repetition, not exact: a tolerance would name those cells on every run.
    Metric("alloc_total_bytes", "bytes", "lower", "every byte allocated during one operation, garbage included (Go B/op)"),
    Metric("allocs_total", "count", "lower", "every allocation made during one operation (Go allocs/op)"),
    Metric("size_bytes", "bytes", "lower", "encoded or stored size", tolerance=0.0),
    Metric("size_zstd_bytes", "bytes", "lower", "encoded size after zstd at its default level",
           tolerance=0.0),
    Metric("size_lz4_bytes", "bytes", "lower", "encoded size after lz4 (frame) at its default level",
           tolerance=0.0),
    Metric("ops_per_s", "ops/s", "higher", "operations per second under concurrent load"),
    Metric("latency_ns", "ns", "lower", "latency of one request under load"),
    Metric("decode_ns", "ns", "lower", "time spent decoding, one stage of an operation"),
    Metric("decompress_ns", "ns", "lower", "time spent decompressing, one stage of an operation"),
    Metric("compile_ns", "ns", "lower", "time to compile a generated asset"),
    Metric("compile_peak_rss_bytes", "bytes", "lower", "peak resident memory of the compiler"),
    Metric("binary_size_bytes", "bytes", "lower", "size of a built binary or bytecode file"),
    Metric("init_ns", "ns", "lower", "package or module initialisation time"),
    Metric("db_cpu_ns", "ns", "lower", "user+system CPU of the local database server (and its backends) per operation"),
    Metric("log_bytes", "bytes", "lower", "bytes a server's log grew by per operation"),
    Metric("log_lines", "count", "lower", "lines a server's log grew by per operation"),
    Metric("sql_statements", "count", "lower", "SQL statements sent per run (every kind, transaction ends included)",
           tolerance=0.0),
    Metric("syscalls", "count", "lower",
           "read and write system calls per operation by the calling thread (/proc/thread-self/io syscr + syscw)",
           tolerance=0.01),
    # Under callgrind with ASLR off and a fixed hash seed, two counts of one cell by the same code
    # agree exactly (stratabench.engine.counting); but a change elsewhere in the process (the
    # harness's own modules) moves the heap's layout, and json.dumps of 50 ints moved 0.8% so.
    # 1% leaves room for that and still sees a 2% change.
    Metric("instructions", "count", "lower", "instructions executed per operation (callgrind, N and 2N differenced)",
           tolerance=0.01),
    Metric("est_cycles", "count", "lower", "estimated cycles per operation from callgrind's cache simulation: "
           "L1 hits + 5 × LL hits + 35 × RAM accesses, where L1 hits = Ir + Dr + Dw − (I1mr + D1mr + D1mw), "
           "LL hits = (I1mr + D1mr + D1mw) − (ILmr + DLmr + DLmw) and RAM accesses = ILmr + DLmr + DLmw",
           tolerance=0.01),
]

METRICS: dict[str, Metric] = {m.name: m for m in _ALL}


def metric(name: str) -> Metric:
    """Return the metric called ``name``.

    Raises
    ------
    StratabenchError
        For a name not in the table: a programming error in a suite.
    """
    try:
        return METRICS[name]
    except KeyError:
        raise StratabenchError(f"unknown metric {name!r}; add it to stratabench.metrics") from None
