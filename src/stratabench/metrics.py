"""The table of metrics: every metric's name, unit, direction and formatter.

Names are stable: result files, reports and ``compare`` key on them. A metric
not in this table is refused when a result is recorded, so a typo cannot
create a new column silently.
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
    """

    name: str
    unit: Literal["ns", "bytes", "count", "ops/s"]
    better: Literal["lower", "higher"]
    description: str

    @property
    def change_words(self) -> tuple[str, str]:
        """The words for a rise and a fall of this metric: ``slower``/``faster`` for a time."""
        if self.unit == "ns":
            return "slower", "faster"
        if self.unit == "ops/s":
            return "faster", "slower"
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
    Metric("retained_bytes", "bytes", "lower", "bytes still allocated after one operation, result alive"),
    Metric("allocs", "count", "lower", "memory blocks still allocated after one operation, result alive"),
    Metric("alloc_total_bytes", "bytes", "lower", "every byte allocated during one operation, garbage included (Go B/op)"),
    Metric("allocs_total", "count", "lower", "every allocation made during one operation (Go allocs/op)"),
    Metric("size_bytes", "bytes", "lower", "encoded or stored size"),
    Metric("size_zstd_bytes", "bytes", "lower", "encoded size after zstd at its default level"),
    Metric("size_lz4_bytes", "bytes", "lower", "encoded size after lz4 (frame) at its default level"),
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
