"""Measure one configuration (server × database × logging) as the study did: batches of suite runs.

For each batch the database is recreated and seeded (stop_service leaks
places, docs/studies/parking.md §9, and fresh tables keep batches alike), the server is
started, one warm-up run is made and not counted, and then the runs follow
back to back. Around each run the measurer reads:

- the client's wall time (the driver's own ``perf_counter``);
- the server's CPU: user+system of its process (psutil), so start-up and
  the warm-up run stay out;
- the database server's CPU, when it is a local server whose processes are
  known (PostgreSQL's backends are its children, so they count);
- the SQL statements by kind: the server's own count where it keeps one
  (the Python servers), and MariaDB's ``Com_*`` counters for every server;
- the bytes and lines the server's log grew by.

A wrong answer fails that run (recorded with its message, never retried,
docs/studies/parking.md §12); the batch goes on with the next run.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from stratabench.systems.parking.driver import SuiteDriver
from stratabench.suites.parking.process import ServerProcess
from stratabench.systems.parking.schema import create_parking_engine, dialect_of, recreate

__all__ = ["Configuration", "RunSample", "cpu_seconds", "measure_batch"]


@dataclass(frozen=True)
class Configuration:
    """One cell of the study: which server, on which database, with logging on or off."""

    impl: str
    database: str
    logging: bool

    @property
    def name(self) -> str:
        return f"{self.impl} {self.database} log {'on' if self.logging else 'off'}"


@dataclass
class RunSample:
    """What one suite run cost; ``None`` where the quantity could not be read."""

    batch: int
    wall_s: float
    server_cpu_s: float | None
    db_cpu_s: float | None
    log_bytes: int | None
    log_lines: int | None
    calls: dict[str, int]
    statements: dict[str, int] | None = None
    db_statements: dict[str, int] | None = None
    failure: str | None = None
    call_seconds: dict[str, float] = field(default_factory=dict)


def cpu_seconds(pids: Sequence[int], *, children: bool = False) -> float | None:
    """User+system CPU of processes (and, with ``children``, of their child processes), or None if one is gone."""
    import psutil

    from stratabench.engine.measure import process_cpu_ns

    every = list(pids)
    if children:
        try:
            every += [child.pid for pid in pids for child in psutil.Process(pid).children(recursive=True)]
        except psutil.Error:
            return None
    # A child that ended between the listing and the read makes the reading unknown, not wrong.
    total = process_cpu_ns(every)
    return None if total is None else total / 1e9


class _LogMeter:
    """How much a log file grew since the last reading."""

    def __init__(self, path: str) -> None:
        self.path = Path(path) if path else None
        self.offset = 0

    def growth(self) -> tuple[int | None, int | None]:
        if self.path is None:
            return 0, 0
        try:
            with self.path.open("rb") as log:
                log.seek(self.offset)
                added = log.read()
        except OSError:
            return None, None
        self.offset += len(added)
        return len(added), added.count(b"\n")


class _MariadbCounters:
    """MariaDB's own statement counters (``SHOW GLOBAL STATUS``), read over a connection of its own."""

    NAMES = {"Com_select": "SELECT (all)", "Com_update": "UPDATE", "Com_insert": "INSERT", "Com_delete": "DELETE",
             "Com_commit": "COMMIT", "Com_rollback": "ROLLBACK"}  # fmt: skip

    def __init__(self, url: str) -> None:
        from urllib.parse import unquote, urlsplit

        import pymysql

        parts = urlsplit(url)
        self._connection = pymysql.connect(host=parts.hostname, port=parts.port or 3306,
                                           user=unquote(parts.username or ""),
                                           password=unquote(parts.password or ""))  # fmt: skip

    def read(self) -> dict[str, int]:
        with self._connection.cursor() as cursor:
            names = ", ".join(f"'{name}'" for name in self.NAMES)
            cursor.execute(f"SHOW GLOBAL STATUS WHERE Variable_name IN ({names})")
            return {self.NAMES[name]: int(value) for name, value in cursor.fetchall()}

    def close(self) -> None:
        self._connection.close()


def _difference(after: dict[str, int] | None, before: dict[str, int] | None) -> dict[str, int] | None:
    if after is None or before is None:
        return None
    return {kind: after[kind] - before.get(kind, 0) for kind in after}


def measure_batch(configuration: Configuration, db_url: str, *, batch: int, runs: int | None, workdir: Path,
                  db_pids: Sequence[int] = ()) -> Iterator[RunSample]:  # fmt: skip
    """One batch: fresh tables, a fresh server, a warm-up run, then ``runs`` measured runs (``None``: one each time
    the caller asks for the next, the server kept until it closes the iterator).

    Raises
    ------
    StratabenchError
        When the server cannot start (UnavailableError for a Go server not built).
    """
    engine = create_parking_engine(db_url)
    try:
        recreate(engine)
    finally:
        engine.dispose()
    log_file = str(workdir / f"{configuration.name.replace(' ', '-')}-{batch}.log") if configuration.logging else ""
    counters = _MariadbCounters(db_url) if dialect_of(db_url) == "mysql" else None
    try:
        with ServerProcess(configuration.impl, db_url, log_file=log_file) as server:
            driver = SuiteDriver(server.base_url)
            warm = driver.run()
            if not warm.ok:
                yield RunSample(batch, warm.wall_s, None, None, None, None, dict(warm.calls), failure=warm.failure)
                return
            log = _LogMeter(log_file)
            log.growth()
            for _ in itertools.count() if runs is None else range(runs):
                statements_before = server.statements()
                db_before = counters.read() if counters else None
                db_cpu_before = cpu_seconds(db_pids, children=True) if db_pids else None
                cpu_before = cpu_seconds([server.pid])
                result = driver.run()
                cpu_after = cpu_seconds([server.pid])
                db_cpu_after = cpu_seconds(db_pids, children=True) if db_pids else None
                db_after = counters.read() if counters else None
                statements_after = server.statements()
                log_bytes, log_lines = log.growth()
                yield RunSample(
                    batch=batch,
                    wall_s=result.wall_s,
                    server_cpu_s=None if cpu_before is None or cpu_after is None else cpu_after - cpu_before,
                    db_cpu_s=None if db_cpu_before is None or db_cpu_after is None else db_cpu_after - db_cpu_before,
                    log_bytes=log_bytes,
                    log_lines=log_lines,
                    calls=dict(result.calls),
                    statements=_difference(statements_after, statements_before),
                    db_statements=_difference(db_after, db_before),
                    failure=result.failure,
                    call_seconds=result.seconds,
                )
    finally:
        if counters is not None:
            counters.close()
