"""The parking suite: server × database × logging, each measured in batches of suite runs.

Cells are the study's configurations: one of the four servers
(``python-orm``, ``python-core``, ``go-orm``, ``go-sql``) on SQLite (always)
and on every PostgreSQL and MariaDB server of the run (``--services local``
or ``--store URL``), with logging off and on. A cell is measured as the
study did (:mod:`.measure`): batches of back-to-back suite runs, one sample
per run: client wall time, server CPU, database server CPU where the
database is a local server, log growth; statements by kind and calls per
function go into the cell's notes.

On a PostgreSQL or MariaDB server the suite works in a database of its own,
``stratabench_parking`` (created if missing), and recreates only the
parking tables there.

In a run, the measured runs are spread over the run (:class:`ParkingSlices`):
the ``i``-th run of every cell follows a round of the Python cells, so a
cell's interval holds the machine's drift over minutes, not over one second.

Settings: ``parking.servers``, ``parking.logging``, ``parking.runs`` (per
batch), ``parking.batches``. The default run is small (3 runs after a
warm-up, one batch: the fewest ``compare --fail-above`` can judge) so it fits the default run's budget; the study's own
procedure is ``--set parking.runs=20 --set parking.batches=5``.
"""

from __future__ import annotations

import statistics
import time
from functools import partial
from dataclasses import replace
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from stratabench.engine.operation import CellSpec, Operation
from stratabench.errors import StratabenchError, UsageError
from stratabench.results.records import CellResult, MetricResult
from stratabench.results.stats import instability
from stratabench.settings import Setting
from stratabench.suites import SUITES
from stratabench.suites.kit.stores import real_url, run_stores
from stratabench.suites.kit.suite import Suite
from stratabench.suites.parking.measure import Configuration, RunSample, measure_batch
from stratabench.suites.parking.process import GO_PROGRAM, IMPLEMENTATIONS, go_binary

__all__ = ["DATABASES", "ParkingSuite"]

#: Measured runs per batch in a default run: the fewest that ``compare --fail-above`` can judge (fewer than three
#: a side fail the gate as "cannot judge"). A run takes 50-120 ms, so two more cost about 1 s over eight cells.
DEFAULT_RUNS = 3

#: Databases in the order the report prefers them: the study used MySQL.
DATABASES = ("mariadb", "postgresql", "sqlite")


@SUITES.register("parking", requires=("sqlalchemy",), extra="parking")
class ParkingSuite(Suite):
    """An OLTP HTTP service four ways (ORM and SQL, Python and Go): client time, server CPU, SQL, logs."""

    settings = (
        Setting("parking.servers", ",".join(IMPLEMENTATIONS), "servers to measure", "list"),
        Setting("parking.logging", "off,on", "logging settings to measure: off, on or both", "list"),
        Setting("parking.runs", str(DEFAULT_RUNS), "measured suite runs per batch (after one warm-up run)", "whole",
                minimum=1, maximum=100_000),
        Setting("parking.batches", "1", "batches per configuration (fresh tables and server each)", "whole",
                minimum=1, maximum=1_000),
    )

    def _choices(self) -> tuple[list[str], list[bool], int, int]:
        servers = self.config.items("parking.servers")
        unknown = sorted(set(servers) - set(IMPLEMENTATIONS))
        if unknown:
            raise UsageError(f"parking.servers: unknown {', '.join(unknown)}; known: {', '.join(IMPLEMENTATIONS)}")
        logging = self.config.items("parking.logging")
        if set(logging) - {"on", "off"}:
            raise UsageError(f"parking.logging: give off, on or off,on, not {','.join(logging)}")
        runs, batches = self.config.whole("parking.runs"), self.config.whole("parking.batches")
        if runs < 1 or batches < 1:
            raise UsageError("parking.runs and parking.batches must be at least 1")
        return servers, [value == "on" for value in logging], runs, batches

    def databases(self) -> list[tuple[str, str]]:
        """(database, redacted URL) for SQLite and each PostgreSQL or MariaDB URL of the run."""
        found = [("sqlite", "")]
        for store in run_stores(self.options, kind="server"):
            if store.kind in DATABASES and all(name != store.kind for name, _ in found):
                found.append((store.kind, store.url))
        return found

    def cells(self) -> list[CellSpec]:
        servers, logging, runs, batches = self._choices()
        cells = []
        for server in servers:
            for database, url in self.databases():
                for on in logging:
                    config = Configuration(server, database, on)
                    cells.append(self.spec(config.name, {"server": server, "database": database,
                                                         "logging": "on" if on else "off", "url": url, "runs": runs,
                                                         "batches": batches}, language="service"))  # fmt: skip
        return cells

    def prepare(self, cell: CellSpec, workdir: Path) -> Operation:
        raise UsageError(f"parking cell {cell.name} is measured by the suite itself, not by the engine")

    def run_external(self, cells: Sequence[CellSpec], workdir: Path) -> Iterator[CellResult]:
        go_problem = _go_problem(cells)
        for cell in cells:
            started = time.perf_counter()
            try:
                result = self._measure(cell, workdir, go_problem)
            except StratabenchError as error:
                result = _failure(cell, error)
            yield replace(result, duration_s=time.perf_counter() - started)

    def slices(self, cells: Sequence[CellSpec], workdir: Path) -> ParkingSlices:
        """The cells' measured runs one at a time, each between two rounds of the run (:class:`ParkingSlices`)."""
        go_problem = _go_problem(cells)
        return ParkingSlices(self, cells, workdir, go_problem)

    def _target(self, cell: CellSpec, workdir: Path, db_file: str = "parking.db") -> tuple[str, tuple[int, ...]]:
        """The database URL a cell works in and the PIDs of its database server (none for SQLite)."""
        from stratabench.services.state import pids_for_address
        from stratabench.systems.parking.schema import own_database
        from urllib.parse import urlsplit

        if cell.params["database"] == "sqlite":
            return f"sqlite:///{workdir / db_file}", ()
        given = real_url(self.options, cell.params["url"])
        parts = urlsplit(given)
        return own_database(given), pids_for_address(parts.hostname, parts.port)

    def _runs(self, cell: CellSpec, workdir: Path, db_file: str = "parking.db", *,
              more: bool = False) -> Iterator[RunSample]:
        """The cell's measured runs, batch after batch, each batch on fresh tables and a fresh server; with
        ``more``, the last batch goes on past its runs for as long as they are asked for (slices past the floor)."""
        url, db_pids = self._target(cell, workdir, db_file)
        batches = int(cell.params["batches"])
        for batch in range(1, batches + 1):
            runs = None if more and batch == batches else int(cell.params["runs"])
            yield from measure_batch(_configuration(cell), url, batch=batch, runs=runs, workdir=workdir,
                                     db_pids=db_pids)

    def _measure(self, cell: CellSpec, workdir: Path, go_problem: str | None) -> CellResult:
        unavailable = _go_unavailable(cell, go_problem)
        if unavailable is not None:
            return unavailable
        return _result(cell, list(self._runs(cell, workdir)), _configuration(cell))


class ParkingSlices:
    """A run's parking cells one measured run at a time: slice ``i`` is the ``i``-th run of every cell.

    A cell on SQLite keeps its server (and its own database file) between
    slices, so its runs are the batch's runs as before, only minutes apart;
    an idle server waits on its socket. Its slices are its runs × batches, a
    batch's server started (after fresh tables and a warm-up run) by the
    batch's first slice. A cell on a PostgreSQL or MariaDB server works in
    the one database the suite owns there, which another cell's fresh tables
    would wipe: it is measured whole in the first slice, as without slices.

    Past the floor (:meth:`run_more`, engine/slices.py): a cell on SQLite
    that misses the target may take more runs on the server its last batch
    kept, as the slices' allowance grants. Why the cells flag: one run (50-230
    ms of client and server on two shared cores) is the value, and three
    runs of a cell spread max/min 1.19 at the median (1.42 at p90) over 96
    cells of ten runs under the lock; the first slice's run is not the slow
    one (its value ÷ the later two's median: 0.97 at the median, p10 0.82,
    p90 1.17), though the first slice takes longest (its servers' start,
    fresh tables and warm-up run). A median that spread needs nine or twelve
    runs within ±5% to meet the target, which the allowance seldom pays
    (one cell took nine in two of four ``run treestore parking``, none in a
    default run).
    """

    def __init__(self, suite: ParkingSuite, cells: Sequence[CellSpec], workdir: Path, go_problem: str | None) -> None:
        self.suite, self.cells, self.workdir, self.go_problem = suite, cells, workdir, go_problem
        self.sliced = [cell.name for cell in cells if cell.params["database"] == "sqlite"]
        self.runs: dict[str, Iterator[RunSample]] = {}
        self.samples: dict[str, list[RunSample]] = {}

    @property
    def count(self) -> int:
        return max((int(cell.params["runs"]) * int(cell.params["batches"]) for cell in self.cells
                    if cell.name in self.sliced), default=1)

    def run(self, index: int) -> Iterator[CellResult]:
        for cell in self.cells:
            yield from self._timed(cell, partial(self._slice, cell, index))

    def _timed(self, cell: CellSpec, measure: Callable[[], CellResult | None]) -> Iterator[CellResult]:
        started = time.perf_counter()
        try:
            result = measure()
        except StratabenchError as error:
            self.runs.pop(cell.name, None)  # its server could not start: no later slice of it
            result = _failure(cell, error)
        if result is not None:
            yield replace(result, duration_s=time.perf_counter() - started)

    def _slice(self, cell: CellSpec, index: int) -> CellResult | None:
        if cell.name not in self.sliced:
            return self.suite._measure(cell, self.workdir, self.go_problem) if index == 0 else None
        if index == 0:
            unavailable = _go_unavailable(cell, self.go_problem)
            if unavailable is not None:
                return unavailable
            # Each cell's own file: its server and tables stay while the other cells' slices run.
            self.runs[cell.name] = self.suite._runs(cell, self.workdir, f"parking-{self.sliced.index(cell.name)}.db",
                                                    more=True)
        if index >= int(cell.params["runs"]) * int(cell.params["batches"]):
            return None  # its floor is done (a cell of fewer runs than another's): only run_more takes it further
        return self._next_run(cell)

    def run_more(self, index: int, cells: Sequence[CellSpec]) -> Iterator[CellResult]:
        """One more run of each of ``cells`` (those the engine still wants: engine/slices.py), on the server its
        last batch kept."""
        for cell in cells:
            if cell.name in self.sliced:
                yield from self._timed(cell, partial(self._next_run, cell))

    def _next_run(self, cell: CellSpec) -> CellResult | None:
        runs = self.runs.get(cell.name)
        sample = next(runs, None) if runs is not None else None
        if sample is None:
            return None
        self.samples.setdefault(cell.name, []).append(sample)
        return _result(cell, [sample], _configuration(cell))

    def notes(self, cell: CellSpec, parts: Sequence[CellResult]) -> dict[str, Any]:
        return _notes(self.samples.get(cell.name, []))

    def close(self) -> None:
        for runs in self.runs.values():
            close = getattr(runs, "close", None)
            if close is not None:
                close()  # stops the batch's server
        self.runs.clear()


def _go_problem(cells: Sequence[CellSpec]) -> str | None:
    """Why the Go server cannot run, when some of ``cells`` need it (it is built first, once); else ``None``."""
    return _build_go_server() if any(cell.params["server"].startswith("go-") for cell in cells) else None


def _go_unavailable(cell: CellSpec, go_problem: str | None) -> CellResult | None:
    """``cell``'s failure when it needs the Go server and that cannot run; ``None`` when it can be measured."""
    server: str = cell.params["server"]
    if server.startswith("go-") and go_problem is not None:
        return CellResult.failure(cell, "unavailable", f"{server}: {go_problem}")
    return None


def _configuration(cell: CellSpec) -> Configuration:
    return Configuration(cell.params["server"], cell.params["database"], cell.params["logging"] == "on")


def _failure(cell: CellSpec, error: StratabenchError) -> CellResult:
    status = "unavailable" if error.exit_code == 69 else "failed"
    return CellResult.failure(cell, status, error.message)  # type: ignore[arg-type]


def _median_counts(counts: Sequence[dict[str, int] | None]) -> dict[str, float] | None:
    known = [c for c in counts if c is not None]
    if not known:
        return None
    return {kind: statistics.median(c.get(kind, 0) for c in known) for kind in known[0]}


def _build_go_server() -> str | None:
    """Build the Go server when missing or older than its sources (a stale one answers to the old API), once a run.

    Returns why it cannot run, or ``None`` when it is ready.
    """
    from stratabench.adapters import golang

    try:
        golang.ensure_built((GO_PROGRAM,))
    except StratabenchError as error:
        return f"the Go program is not built ({go_binary()}): {error.message}"
    return None


def _result(cell: CellSpec, samples: list[RunSample], config: Configuration) -> CellResult:
    """The cell's result: one sample per measured run; counts and calls in the notes."""
    good = [s for s in samples if s.failure is None]
    failed = [s for s in samples if s.failure is not None]
    metrics: dict[str, MetricResult] = {}

    def add(name: str, values: list[float | None], scale: float = 1.0) -> None:
        known = [v * scale for v in values if v is not None]
        if known and len(known) == len(values):
            metrics[name] = MetricResult.of(known)

    if good:
        add("wall_ns", [s.wall_s for s in good], 1e9)
        add("server_cpu_ns", [s.server_cpu_s for s in good], 1e9)
        add("db_cpu_ns", [s.db_cpu_s for s in good], 1e9)
        # Every statement the server sent in a run: exact, so compare names any change in it.
        add("sql_statements", [float(sum(s.statements.values())) if s.statements is not None else None for s in good])
        if config.logging:
            add("log_bytes", [float(s.log_bytes) if s.log_bytes is not None else None for s in good])
            add("log_lines", [float(s.log_lines) if s.log_lines is not None else None for s in good])
    error = None
    if failed:
        error = f"{len(failed)} of {len(samples)} suite runs failed; the first: {failed[0].failure}"
    return CellResult(suite=cell.suite, cell=cell.name, params=dict(cell.params), language=cell.language,
                      status="failed" if failed else "ok", error=error, loops=1, metrics=metrics,
                      notes=_notes(samples),
                      flags=tuple(instability(metrics["wall_ns"].summary)) if "wall_ns" in metrics else (),
                      judged="wall_ns" if "wall_ns" in metrics else None)  # fmt: skip


def _notes(samples: Sequence[RunSample]) -> dict[str, Any]:
    """Runs, failures, batches, and the median counts (calls, statements) of the runs that succeeded."""
    good = [s for s in samples if s.failure is None]
    return {
        "runs": len(samples),
        "failed_runs": len(samples) - len(good),
        "batches": max((s.batch for s in samples), default=0),
        "calls": _median_counts([s.calls for s in good]),
        "call_seconds": {name: statistics.median(s.call_seconds.get(name, 0.0) for s in good)
                         for name in good[0].call_seconds} if good else None,  # fmt: skip
        "statements": _median_counts([s.statements for s in good]),
        "db_statements": _median_counts([s.db_statements for s in good]),
    }
