"""Client reports built by hand, for testing the merge and the diagnosis without a server."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from stratabench.load.cells import load_cell
from stratabench.load.client import ClientReport
from stratabench.load.histogram import encode, histogram_of
from stratabench.load.run import LoadResult, LoadSpec, merge_reports
from stratabench.load.sweep import SweepLimits, sweep
from stratabench.results.environment import environment
from stratabench.results.format import header_record
from stratabench.results.writer import ResultsWriter

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


LIMITS = SweepLimits(p99_ns=2_000_000)


def at_rate(spec: LoadSpec) -> LoadResult:
    """What a made-up server answers at the spec's rate: 100 µs until 3,000/s, then queueing (the knee at 3,000/s)."""
    rate = spec.rate_per_s or 0.0
    latency = 100_000 if rate <= 3000 else 5_000_000
    per_interval = int(rate * SPEC.duration_s / SPEC.intervals / 2)
    return merge_reports(spec, [report(i, [[latency] * per_interval] * SPEC.intervals,
                                       scheduled=per_interval * SPEC.intervals) for i in range(2)])


def write_load_run(path: Path) -> None:
    """A results file as ``stratabench load --client-lang python,go --sweep`` writes it, from made-up reports.

    A Python closed loop (the sweep's peak); a Go closed loop with two wrong reads; a sweep of 1,000 to
    5,000/s whose knee is 3,000/s, stopped at 4,000/s by its p99 limit.
    """
    header = header_record("load", "2026-11-23T00:00:00+00:00", environment(), {"suites": ["load"]}, {})
    with ResultsWriter(path, header) as writer:
        closed = merge_reports(SPEC, [report(0, [[80_000] * 50] * 5), report(1, [[90_000] * 50] * 5)])
        writer.write(load_cell(closed, params={"sweep": "peak"}))
        go = merge_reports(replace(SPEC, client_lang="go", clients=1), [report(
            0, [[30_000] * 90] * 5, failed_checks=2, first_failed_check="key user000000000007: x")])
        writer.write(load_cell(go))

        def measure(spec: LoadSpec) -> LoadResult:
            result = at_rate(spec)
            writer.write(load_cell(result, params={"sweep": "point", "p99_limit_ns": LIMITS.p99_ns,
                                                   "error_limit": LIMITS.error_fraction},
                                   notes={"over_limit": LIMITS.exceeded(result)}))
            return result

        swept = sweep(SPEC, [1000, 2000, 3000, 4000, 5000], LIMITS, measure=measure)
        assert swept.knee is not None and swept.knee.rate_per_s == 3000
