"""Client reports built by hand, for testing the merge and the diagnosis without a server."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from stratabench.load.client import ClientReport
from stratabench.load.histogram import encode, histogram_of
from stratabench.load.run import LoadSpec

SPEC = LoadSpec("redis://127.0.0.1:1/0", tuple(b"x" for _ in range(8)), clients=2, duration_s=5.0, warmup_s=0.0)


def report(index: int, latencies_per_interval: list[list[int]], **changes: Any) -> ClientReport:
    """A client that answered these latencies, interval by interval, over SPEC's window."""
    every = [value for interval in latencies_per_interval for value in interval]
    values: dict[str, Any] = dict(
        index=index, host="here", pid=0, host_cpus=8, ops=len(every), kinds={"read": len(every)},
        errors=0, first_error=None, failed_checks=0, first_failed_check=None,
        histogram=encode(histogram_of(every)),
        interval_histograms=tuple(encode(histogram_of(values)) for values in latencies_per_interval),
        window_s=SPEC.duration_s, busy_cpu_s=1.0, wall_s=SPEC.duration_s, host_busy=0.3,
        scheduled=None, unsent=None, final_lag_ns=None, fatal=None,
    )
    return replace(ClientReport(**values), **changes)
