"""The load engine beside redis-benchmark, on one private Redis, in one run.

Prints two tables:

1. **Closed loop, 1, 2, 4, 8 clients**: our throughput for GET and SET of
   the same value size as ``redis-benchmark -d`` (stamp included), beside
   redis-benchmark's with as many connections, on the same server; the ratio
   redis-benchmark / ours is our client-side overhead (Python processes with
   redis-py and a checked read, against one C event loop). Beside them, the
   same configuration from Go clients (``--client-lang go``: go-redis and the
   same checked read), and redis-benchmark / Go, so that the share of the
   overhead that is Python's shows. Each row says whether our clients were
   saturated.
2. **Open loop past what one client sustains**: one client asked for more
   requests per second (twice what it managed in a closed loop just before). Measured from each
   request's due time, p99 grows with the queue behind the late requests
   (interval by interval); the closed loop's p99, measured from each send,
   hides that wait.

Run it with the project's environment (``redis-server`` and
``redis-benchmark`` on the PATH):

    .venv/bin/python benchmarks/load_vs_redis_benchmark.py [--duration 2] [--value-size 100]

It is a benchmark, not a test: it reports figures from one run and asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import io
import shutil
import subprocess
import sys
from urllib.parse import urlsplit

from stratabench.load.histogram import decode, summarize_histogram
from stratabench.load.records import STAMP_BYTES, generated_payloads
from stratabench.errors import StratabenchError
from stratabench.load.go_clients import GoProcesses
from stratabench.load.run import ClientRunner, LoadResult, LoadSpec, run_load
from stratabench.redact import password_of
from stratabench.services.session import local_services
from stratabench.units import format_ns

CLIENTS = (1, 2, 4, 8)
KEYS = 1000


def redis_benchmark_rps(url: str, test: str, clients: int, value_size: int, requests: int) -> float:
    """redis-benchmark's requests per second for one test (``get`` or ``set``) over ``clients`` connections."""
    parts = urlsplit(url)
    command = ["redis-benchmark", "-h", parts.hostname or "127.0.0.1", "-p", str(parts.port or 6379), "-t", test,
               "-c", str(clients), "-n", str(requests), "-d", str(value_size), "-r", str(KEYS), "-P", "1", "--csv"]
    password = password_of(url)
    if password:
        # redis-benchmark reads a password only from -a; this one belongs to a private server of this script's own.
        command += ["-a", password]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    rows = [row for row in csv.reader(io.StringIO(out)) if row and row[0].upper() == test.upper()]
    return float(rows[0][1])


def ours(url: str, workload: str, clients: int, duration: float, payload: int, rate: float | None = None,
         runner: ClientRunner | None = None) -> LoadResult:
    lang = "python" if runner is None else "go"
    spec = LoadSpec(url, generated_payloads(KEYS, payload), workload=workload, clients=clients, rate_per_s=rate,
                    warmup_s=0.5, duration_s=duration, run_id=f"bench-{workload}-{clients}-{rate or 0:g}-{lang}",
                    client_lang=lang)
    result = run_load(spec, runner)
    if not result.ok:
        raise SystemExit(f"error: {result.error}")
    return result


def closed_loop_table(url: str, duration: float, value_size: int, go: ClientRunner | None) -> None:
    """Print table 1 (without the Go columns when Go clients cannot be built here)."""
    print(f"closed loop, {value_size}-byte values ({STAMP_BYTES} of them our integrity stamp), {KEYS} keys, "
          f"{duration:g} s per row")
    print(f"{'clients':>7} {'op':>4} {'Python ops/s':>13} {'p50':>9} {'p99':>9} {'Go ops/s':>9} {'Go p99':>9} "
          f"{'redis-benchmark':>16} {'rb/Python':>9} {'rb/Go':>6}  clients saturated? (Python; Go)")
    for clients in CLIENTS:
        for workload, test in (("get", "get"), ("put", "set")):
            result = ours(url, workload, clients, duration, value_size - STAMP_BYTES)
            in_go = None if go is None else ours(url, workload, clients, duration, value_size - STAMP_BYTES, runner=go)
            theirs = redis_benchmark_rps(url, test, clients, value_size,
                                         requests=max(20_000, int(result.ops_per_s * duration * 4)))
            busy = max(r.busy_fraction for r in result.reports)
            machine = max(r.host_busy for r in result.reports)
            go_cells = (f"{in_go.ops_per_s:>9,.0f} {format_ns(in_go.latency.p99_ns):>9}" if in_go
                        else f"{'-':>9} {'-':>9}")
            go_ratio = f"{theirs / in_go.ops_per_s:>5.1f}x" if in_go and in_go.ops_per_s else f"{'-':>6}"
            go_saturated = "-" if in_go is None else ("yes" if in_go.client_saturated else "no")
            print(f"{clients:>7} {test.upper():>4} {result.ops_per_s:>13,.0f} {format_ns(result.latency.p50_ns):>9} "
                  f"{format_ns(result.latency.p99_ns):>9} {go_cells} {theirs:>16,.0f} "
                  f"{theirs / result.ops_per_s:>8.1f}x {go_ratio}  "
                  f"{'yes' if result.client_saturated else 'no'}; {go_saturated} (busiest Python client {busy:.0%} "
                  f"of a core, machine {machine:.0%} busy)")


def open_loop_table(url: str, duration: float, value_size: int) -> None:
    closed = ours(url, "get", 1, duration, value_size - STAMP_BYTES)
    rate = float(f"{closed.ops_per_s * 2:.2g}")
    opened = LoadSpec(url, generated_payloads(KEYS, value_size - STAMP_BYTES), workload="get", clients=1,
                      rate_per_s=rate, warmup_s=0.0, duration_s=duration, run_id="bench-open")
    late = run_load(opened)
    print()
    print(f"one client, GET: closed loop beside an open loop at {rate:,.0f}/s (2x what the closed loop managed)")
    print(f"{'loop':>20} {'ops/s':>10} {'p50':>10} {'p90':>10} {'p99':>10} {'p99.9':>10} {'max':>10}")
    for name, result in (("closed (from send)", closed), ("open (from due time)", late)):
        s = result.latency
        print(f"{name:>20} {result.ops_per_s:>10,.0f} {format_ns(s.p50_ns):>10} {format_ns(s.p90_ns):>10} "
              f"{format_ns(s.p99_ns):>10} {format_ns(s.p999_ns):>10} {format_ns(s.max_ns):>10}")
    p99s = [summarize_histogram(decode(h)).p99_ns for h in late.interval_histograms]
    print("open loop p99 interval by interval: " + ", ".join(format_ns(p) for p in p99s))
    for warning in late.warnings:
        print(f"warning: {warning}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=2.0, help="seconds measured per row (default 2)")
    parser.add_argument("--value-size", type=int, default=100, help="bytes per value, as redis-benchmark -d")
    args = parser.parse_args()
    if shutil.which("redis-benchmark") is None:
        print("error: redis-benchmark not found; it ships with redis-server (apt install redis-tools)", file=sys.stderr)
        return 69
    if args.value_size < STAMP_BYTES:
        print(f"error: --value-size must be at least {STAMP_BYTES}, the integrity stamp", file=sys.stderr)
        return 2
    try:
        go: ClientRunner | None = GoProcesses()
    except StratabenchError as error:
        print(f"warning: no Go clients in this run: {error.message}", file=sys.stderr)
        go = None
    with local_services(["redis"]) as running:
        url = running["redis"].url
        closed_loop_table(url, args.duration, args.value_size, go)
        open_loop_table(url, max(args.duration, 3.0), args.value_size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
