"""Server CPU per suite run of the four parking servers, side by side, as ratios against python-orm.

Targets (issue 12): ``go-sql`` at least 3× below ``python-orm`` (the study's
compiled-ORM figure), ``python-core`` at least 1.5× below; ``go-orm``'s
ratio is reported whatever it is. Each server runs the study's suite
``--runs`` times after a warm-up run, logging off, on a fresh SQLite
database (``--db mariadb`` or ``--db postgresql`` starts a private server
of that kind for the run, ``--db URL`` uses yours); the server's user+system
CPU is read around each run and the median per run is compared. A Go
server that is not built (``scripts/install stratabench-parking``) is
reported as unavailable.

    .venv/bin/python benchmarks/parking_server_cpu.py [--runs 20] [--db mariadb|postgresql|URL]

It is a benchmark, not a test: it prints ratios from one run and asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from stratabench.errors import StratabenchError
from stratabench.suites.parking.measure import Configuration, measure_batch
from stratabench.suites.parking.process import IMPLEMENTATIONS
from stratabench.systems.parking.schema import dialect_of, own_database

TARGETS = {"python-core": 1.5, "go-sql": 3.0}


@contextmanager
def database_url(given: str | None) -> Iterator[tuple[str | None, tuple[int, ...]]]:
    """The URL to use (None: SQLite per server) and the database server's pids, starting one if asked."""
    if given not in ("mariadb", "postgresql"):
        yield (own_database(given) if given else None), ()
        return
    from stratabench.services.session import local_services

    with local_services([given]) as running:
        yield own_database(running[given].url), running[given].pids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="measured suite runs per server (default 20)")
    parser.add_argument("--db", help="mariadb or postgresql (a private server), or a database URL "
                        "(default: a fresh SQLite file per server)")
    args = parser.parse_args()
    medians: dict[str, float] = {}
    walls: dict[str, float] = {}
    db_cpu: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp, database_url(args.db) as (server_url, db_pids):
        workdir = Path(tmp)
        for impl in IMPLEMENTATIONS:
            url = server_url or f"sqlite:///{workdir / (impl + '.db')}"
            database = {"mysql": "mariadb"}.get(dialect_of(url), dialect_of(url))
            try:
                samples = list(measure_batch(Configuration(impl, database, False), url, batch=1, runs=args.runs,
                                             workdir=workdir, db_pids=db_pids))  # fmt: skip
            except StratabenchError as error:
                print(f"{impl:12} unavailable: {error.message}")
                continue
            failed = [sample.failure for sample in samples if sample.failure]
            cpu = [sample.server_cpu_s for sample in samples if sample.server_cpu_s is not None and not sample.failure]
            if failed or not cpu:
                print(f"{impl:12} failed: {failed[0] if failed else 'no CPU reading'}")
                continue
            medians[impl] = statistics.median(cpu)
            walls[impl] = statistics.median(sample.wall_s for sample in samples)
            db = [sample.db_cpu_s for sample in samples if sample.db_cpu_s is not None]
            if db:
                db_cpu[impl] = statistics.median(db)
    base = medians.get("python-orm")
    print(f"\n{'server':12} {'CPU ms/run':>11} {'DB CPU ms/run':>14} {'client ms/run':>14} {'python-orm / it':>16}"
          "  target")
    for impl, cpu in medians.items():
        ratio = f"{base / cpu:.2f}x" if base else "-"
        target = TARGETS.get(impl)
        verdict = "" if target is None or not base else f">= {target}x: {'met' if base / cpu >= target else 'missed'}"
        db = f"{db_cpu[impl] * 1e3:.1f}" if impl in db_cpu else "-"
        print(f"{impl:12} {cpu * 1e3:11.1f} {db:>14} {walls[impl] * 1e3:14.1f} {ratio:>16}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
