"""The parking service under load: 8 drivers at once against each of the four servers on PostgreSQL.

Target (issue 13): 0 failed checks and 0 reconciliation differences for
every server, with throughput and p99 per server in one table. Each server
gets a freshly recreated database on a private PostgreSQL started by the
project's services code (``--db URL`` uses yours), each driver its own lots
and users; every answer is checked and the database reconciled after the
run (:mod:`stratabench.suites.parking.load`). A Go server that is not built
(``scripts/install stratabench-parking``) is reported as unavailable.

    .venv/bin/python benchmarks/parking_load.py [--clients 8] [--duration 60] [--db URL]

It is a benchmark, not a test: it prints one run's figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from stratabench.errors import StratabenchError
from stratabench.suites.parking.load import ParkingLoadSpec, run_parking_load
from stratabench.suites.parking.process import IMPLEMENTATIONS
from stratabench.units import format_ns


@contextmanager
def database(given: str | None) -> Iterator[str]:
    """The database URL: ``given``, or a private PostgreSQL for the length of the benchmark."""
    if given:
        yield given
        return
    from stratabench.services.session import local_services

    with local_services(["postgresql"]) as running:
        yield running["postgresql"].url


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8, help="concurrent drivers (default 8)")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds measured per server (default 60)")
    parser.add_argument("--warmup", type=float, default=2.0, help="unrecorded seconds first (default 2)")
    parser.add_argument("--db", help="a database URL (default: a private PostgreSQL)")
    args = parser.parse_args()
    rows = []
    print(f"{args.clients} drivers, {args.duration:g} s each, load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs", file=sys.stderr)
    with database(args.db) as url:
        for impl in IMPLEMENTATIONS:
            spec = ParkingLoadSpec(impl=impl, db_url=url, clients=args.clients, warmup_s=args.warmup,
                                   duration_s=args.duration)
            try:
                outcome = run_parking_load(spec)
            except StratabenchError as error:
                rows.append((impl, "-", "-", "-", "-", "-", f"unavailable: {error.message}"))
                continue
            result = outcome.load
            rows.append((impl, f"{result.ops_per_s:,.0f}", format_ns(result.latency.p50_ns),
                         format_ns(result.latency.p99_ns), str(result.failed_checks), str(len(outcome.discrepancies)),
                         "ok" if result.ok else f"failed: {result.error}"))
            for warning in result.warnings:
                print(f"{impl}: {warning}", file=sys.stderr)
    header = ("server", "calls/s", "p50", "p99", "failed checks", "reconciliation differences", "status")
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
