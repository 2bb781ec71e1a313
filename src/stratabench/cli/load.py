"""``stratabench load``: many clients against one store or service; throughput, tail latency, the knee, nothing lost.

``stratabench load --store URL`` loads a store; ``stratabench load parking
--server NAME --db NAME|URL`` loads a parking server with drivers of its
API (:mod:`stratabench.suites.parking.load`): the same clients, histograms
and results, every answer checked and the database reconciled after each
configuration.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from stratabench.cli.arguments import add_output_arguments, fraction, number_in, parse_settings, whole_in
from stratabench.cli.run import recovered_scratch
from stratabench.cli.signals import interrupt_description
from stratabench.layers.stores.namespaces import new_run_id
from stratabench.errors import StratabenchError, UsageError
from stratabench.layers.stores import open_store
from stratabench.load.cells import cell_name, load_cell
from stratabench.load.cluster import ClusterAddress, DaskClients, parse_cluster
from stratabench.load.records import generated_payloads, payloads_from_rows
from stratabench.load.recovery import spilled_reports, spilling
from stratabench.load.client import attached_reports
from stratabench.load.run import ClientRunner, LoadResult, LoadSpec, Pacing, default_runner, interrupted_result, run_load
from stratabench.load.store_requests import store_libraries
from stratabench.load.sweep import SweepLimits, default_rates, sweep
from stratabench.load.workload import WORKLOADS
from stratabench.options import RunOptions
from stratabench.report.formats import REPORTERS
from stratabench.results.records import CellResult
from stratabench.suites.kit.reports import run_report
from stratabench.results.environment import environment
from stratabench.results.format import header_record
from stratabench.results.writer import ResultsWriter
from stratabench.suites.parking.process import IMPLEMENTATIONS
from stratabench.units import format_bytes, format_ns

__all__ = ["LoadOptions", "add_parser", "load"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "load",
        help="many clients against one store: throughput, p50-p99.9 latency, the knee, every read checked",
        description="Run concurrent clients (processes, or tasks on a Dask cluster) against a store in a closed "
        "loop, or an open loop at --rate with latency measured from each request's due time; every read is "
        "checked against what its client wrote. Results stream to a JSON Lines file, one cell per configuration.",
    )
    parser.add_argument("service", nargs="?", choices=["parking"],
                        help="load a study's service instead of a store: parking (with --server and --db)")
    parser.add_argument("--store", metavar="URL", help="the store to load, e.g. redis://127.0.0.1:6379/0")
    service = parser.add_argument_group("a service (stratabench load parking)")
    service.add_argument("--server", default="python-core", metavar="NAME[,NAME]",
                         help="the parking servers to load, comma-separated: "
                         + ", ".join(IMPLEMENTATIONS) + " (default python-core)")
    service.add_argument("--db", default="sqlite", metavar="NAME|URL",
                         help="the parking database: sqlite (a fresh file), postgresql or mariadb (a private server "
                         "for the run), or a database URL (the study's own database in it) (default sqlite)")
    work = parser.add_argument_group("workload")
    work.add_argument("--workload", default="get", metavar="NAME[,NAME]",
                      help=f"{', '.join(WORKLOADS)} (comma-separated for several; default get): "
                      + "; ".join(f"{w.name}: {w.description}" for w in WORKLOADS.values()).replace("%", "%%"))
    work.add_argument("--clients", default="1", metavar="C[,C]", help="concurrent clients (comma-separated for several; default 1)")
    work.add_argument("--rate", metavar="R[,R]",
                      help="open loop at R requests/s in total (comma-separated for several); without it, a closed loop")
    work.add_argument("--duration", type=number_in(0, 86_400, what="a number of seconds", low_open=True), default="10",
                      metavar="SECONDS", help="seconds measured per configuration, up to a day (default 10)")
    work.add_argument("--warmup", type=number_in(0, 3600, what="a number of seconds"), default="1", metavar="SECONDS",
                      help="unrecorded seconds before, up to an hour (default 1)")
    data = parser.add_argument_group("records")
    data.add_argument("--data", metavar="FILE", help="your own records (JSON Lines or CSV), one key each")
    data.add_argument("--codec", default="json", metavar="NAME", help="encodes each of your records (default json)")
    data.add_argument("--records", type=whole_in(1, MAX_RECORDS), default="1000", metavar="N",
                      help=f"generated records, without --data (default 1000, at most {MAX_RECORDS:,})")
    data.add_argument("--value-size", type=whole_in(0, MAX_VALUE_BYTES), default="100", metavar="BYTES",
                      help=f"bytes per generated record (default 100, at most {MAX_VALUE_BYTES:,})")
    data.add_argument("--seed", type=whole_in(-(2**63), 2**63 - 1), default=1, metavar="S",
                      help="seeds records and request plans (default 1)")
    sweeping = parser.add_argument_group("rate sweep")
    sweeping.add_argument("--sweep", action="store_true",
                          help="raise the rate until p99 or errors pass their limit (--rate gives the rates; "
                          "default: around a closed loop's throughput) and report the knee")
    sweeping.add_argument("--p99-limit", type=number_in(0, 3_600_000, what="a number of milliseconds", low_open=True),
                          default="10", metavar="MS", help="the sweep's p99 limit, ms (default 10)")
    sweeping.add_argument("--error-limit", type=fraction(0, 1), default="0.01", metavar="FRACTION",
                          help="the sweep's limit on failed requests, as 0.01 or 1%% (default 0.01)")
    where = parser.add_argument_group("where the clients run")
    where.add_argument("--cluster", metavar="ADDR",
                       help="run the clients as Dask tasks: local, local:N (N worker processes here) or a "
                       "scheduler address such as tcp://host:8786")
    where.add_argument("--client-lang", default="python", metavar="LANG[,LANG]",
                       help="what the clients are written in: python (processes, or Dask tasks) or go (processes "
                       "of the Go program, Redis only); comma-separated to run each configuration with both")
    where.add_argument("--set", action="append", metavar="PLUGIN.SETTING=VALUE", dest="settings",
                       help="a store setting, e.g. redis.socket_timeout=5 (repeatable)")
    add_output_arguments(parser)
    parser.set_defaults(handler=handle)


#: The most generated records, and bytes in one: they are held in memory, in every client too.
MAX_RECORDS = 10_000_000
MAX_VALUE_BYTES = 64 * 1024 * 1024
#: The most bytes of generated records in all: each client process holds a copy.
MAX_GENERATED_BYTES = 2_000_000_000
#: The highest open-loop rate, requests/s: far beyond what one machine's clients can send.
MAX_RATE = 10_000_000


def _numbers(text: str, option: str, kind: Callable[[str], float], high: float) -> list[float]:
    try:
        values = [kind(part.strip().replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"{option} {text!r}: expected a number or comma-separated numbers") from None
    too_big = [value for value in values if not value <= high]  # catches nan too
    if too_big:
        raise UsageError(f"{option} {too_big[0]:g} is out of range: use finite numbers up to {high:,.0f}")
    return values


@dataclass(frozen=True)
class LoadOptions:
    """Everything ``stratabench load`` runs, built and checked before anything starts.

    Attributes
    ----------
    specs
        One configuration per workload × clients × rate; when sweeping, one
        per workload × clients, closed loop (the probe), the sweep setting the rates.
    sweep
        Sweep each workload × clients over ``sweep_rates`` (default rates when empty).
    sweep_rates, limits
        The rates to sweep and where the sweep stops.
    cluster
        Where the clients run: ``None`` for local processes.
    run_id, output, overwrite, quiet, format
        As the options of ``stratabench run``.
    data
        The user's records file, if any.
    database
        The parking database asked for (``sqlite``, ``postgresql``,
        ``mariadb`` or a URL); ``None`` when loading a store.
    """

    specs: tuple[Pacing, ...]
    sweep: bool
    sweep_rates: tuple[float, ...]
    limits: SweepLimits
    cluster: ClusterAddress | None
    run_id: str
    output: Path
    overwrite: bool
    quiet: bool
    format: str
    data: str | None
    database: str | None = None

    def run_options(self) -> RunOptions:
        """The options the results header records: what ``report`` and ``compare`` read back.

        The load-specific figures (clients, rate, durations, records) are each cell's parameters.
        """
        first = self.specs[0]
        if not isinstance(first, LoadSpec):
            return RunOptions(suites=("load",), run_id=self.run_id)
        settings = first.options.settings if first.options else {}
        return RunOptions(suites=("load",), stores=(first.store_url,), data=self.data, seed=first.seed,
                          settings=settings, run_id=self.run_id)


def handle(args: argparse.Namespace) -> int:
    REPORTERS.get(args.format)
    return load(options_from_args(args))


def options_from_args(args: argparse.Namespace) -> LoadOptions:
    """Check every argument and build every configuration: a bad one is one line before anything starts."""
    from stratabench.plugins import check_settings

    if (args.service is None) == (args.store is None):
        raise UsageError("give --store URL to load a store, or `stratabench load parking` to load a parking server")
    if args.service == "parking":
        return _parking_options(args)
    # Options of the other kind of load are refused, not ignored: the user meant something by them.
    for flag, value, default in (("--server", args.server, "python-core"), ("--db", args.db, "sqlite")):
        if value != default:
            raise UsageError(f"{flag} is for `stratabench load parking`; a store load takes --store only")
    if args.data is not None and not args.data.strip():
        raise UsageError("--data is empty; give the name of a JSON Lines or CSV file of records")
    if args.data is None and args.codec != "json":
        raise UsageError(f"--codec {args.codec!r} encodes --data records; without --data the records are generated "
                         "bytes: give --data FILE, or leave --codec out")
    if not args.codec.strip():
        raise UsageError("--codec is empty; name a codec (stratabench list shows them)")
    run_id = new_run_id()
    settings = parse_settings(args.settings)
    check_settings(settings)
    run_options = RunOptions(settings=settings, run_id=run_id)
    payloads = _payloads(args)
    rates: list[float | None] = list(_numbers(args.rate, "--rate", float, MAX_RATE)) if args.rate else [None]
    workloads = [w.strip() for w in args.workload.split(",") if w.strip()]
    langs = [lang.strip() for lang in args.client_lang.split(",") if lang.strip()]
    if not langs:
        raise UsageError(f"--client-lang {args.client_lang!r} names no language; choose python or go")
    cluster = parse_cluster(args.cluster) if args.cluster is not None else None
    if cluster is not None and "go" in langs:
        raise UsageError("--cluster runs Python clients only; leave go out of --client-lang, or --cluster out")
    configurations = [
        LoadSpec(args.store, payloads, workload=workload, clients=int(clients), rate_per_s=rate,
                 warmup_s=args.warmup, duration_s=args.duration,
                 run_id=run_id, seed=args.seed, options=run_options, client_lang=lang)
        for workload in workloads
        for clients in _numbers(args.clients, "--clients", int, MAX_RECORDS)
        for lang in langs
        for rate in rates
    ]  # fmt: skip
    if not configurations:
        raise UsageError("--workload and --clients name no configuration to run")
    # A sweep runs each workload x clients once, at each of the rates (all checked above).
    specs = (tuple(dict.fromkeys(replace(c, rate_per_s=None) for c in configurations)) if args.sweep
             else tuple(configurations))
    return LoadOptions(
        specs=specs, sweep=args.sweep,
        sweep_rates=tuple(r for r in rates if r is not None) if args.sweep else (),
        limits=SweepLimits(p99_ns=args.p99_limit * 1e6, error_fraction=args.error_limit),
        cluster=cluster,
        run_id=run_id, output=Path(args.output or f"results/{run_id}.jsonl"), overwrite=args.overwrite,
        quiet=args.quiet, format=args.format, data=args.data,
    )  # fmt: skip


_PRIVATE_DATABASES = ("sqlite", "postgresql", "mariadb")


def _parking_options(args: argparse.Namespace) -> LoadOptions:
    """The parking configurations: each server x clients x rate, on one database."""
    from stratabench.suites.parking.load import ParkingLoadSpec
    from stratabench.systems.parking.schema import sqlalchemy_url

    if args.sweep:
        raise UsageError("--sweep loads stores only; give the parking server --rate values instead")
    servers = [name.strip() for name in args.server.split(",") if name.strip()]
    unknown = [name for name in servers if name not in IMPLEMENTATIONS]
    if unknown or not servers:
        raise UsageError(f"--server {args.server!r}: choose among {', '.join(IMPLEMENTATIONS)}")
    if args.db not in _PRIVATE_DATABASES:
        sqlalchemy_url(args.db)  # a URL of a kind the servers cannot use is refused now
    run_id = new_run_id()
    rates: list[float | None] = list(_numbers(args.rate, "--rate", float, MAX_RATE)) if args.rate else [None]
    # The database is known once it runs (a private server's port): a placeholder of the right kind until then.
    placeholder = args.db if args.db not in _PRIVATE_DATABASES else f"{args.db}://"
    specs = tuple(
        ParkingLoadSpec(impl=impl, db_url=placeholder, clients=int(clients), rate_per_s=rate, seed=args.seed,
                        warmup_s=args.warmup, duration_s=args.duration)
        for impl in servers
        for clients in _numbers(args.clients, "--clients", int, MAX_RECORDS)
        for rate in rates
    )  # fmt: skip
    return LoadOptions(
        specs=specs, sweep=False, sweep_rates=(), limits=SweepLimits(), cluster=parse_cluster(args.cluster) if
        args.cluster is not None else None, run_id=run_id, output=Path(args.output or f"results/{run_id}.jsonl"),
        overwrite=args.overwrite, quiet=args.quiet, format=args.format, data=None, database=args.db,
    )  # fmt: skip


@contextmanager
def _parking_database(name: str) -> Iterator[str]:
    """The URL of the parking database: a fresh SQLite file, a private server for the run, or the user's."""
    if name == "sqlite":
        with tempfile.TemporaryDirectory(prefix="stratabench-parking-load-") as folder:
            yield f"sqlite:///{Path(folder) / 'parking.db'}"
    elif name in _PRIVATE_DATABASES:
        from stratabench.services.session import local_services

        with local_services([name]) as running:
            yield running[name].url
    else:
        yield name


def _payloads(args: argparse.Namespace) -> tuple[bytes, ...]:
    if args.data:
        from stratabench.datasets.userfile import load_records

        records = load_records(args.data)
        return payloads_from_rows(records.schema, records.rows, args.codec)
    if args.records * args.value_size > MAX_GENERATED_BYTES:
        raise UsageError(f"--records {args.records:,} of --value-size {args.value_size:,} bytes make "
                         f"{format_bytes(args.records * args.value_size)}, over the {format_bytes(MAX_GENERATED_BYTES)} "
                         "every client would hold; use fewer or smaller records")
    return generated_payloads(args.records, args.value_size, args.seed)


def _runners(options: LoadOptions) -> dict[str, ClientRunner]:
    """A runner per client language the configurations use (a Go build happens here, before any client)."""
    langs = dict.fromkeys(spec.language for spec in options.specs)
    if options.cluster is not None:
        return {"python": DaskClients(options.cluster, clients=max(s.clients for s in options.specs))}
    return {lang: default_runner(lang) for lang in langs}


class _Session:
    """Runs configurations, writing each as a cell the moment it is measured."""

    def __init__(self, options: LoadOptions, runners: dict[str, ClientRunner], writer: ResultsWriter,
                 header: dict[str, Any], scratch: Path) -> None:  # fmt: skip
        self.options, self.runners, self.writer = options, runners, writer
        self.header, self.scratch = header, scratch
        self.results: list[LoadResult] = []
        self.cells: list[CellResult] = []
        self.database_url = ""

    def measure(self, spec: Pacing, limits: SweepLimits | None = None, **params: Any) -> LoadResult:
        started = time.monotonic()
        runner = self.runners[spec.language]
        if not isinstance(spec, LoadSpec):
            from stratabench.suites.parking.load import ParkingLoadSpec

            assert isinstance(spec, ParkingLoadSpec)
            spec = replace(spec, db_url=self.database_url)
        # Each finished second on disk as well, for the next command to keep after a kill -9.
        with spilling(self.scratch if runner.spills else None, spec, output=self.options.output, header=self.header,
                      runner=runner.description, params=params, command="stratabench load") as spill:
            try:
                if isinstance(spec, LoadSpec):
                    result = run_load(spec, runner, spill=spill)
                else:
                    from stratabench.suites.parking.load import run_parking_load

                    result = run_parking_load(spec, runner, spill=spill).load
            except KeyboardInterrupt as interrupt:
                # The seconds measured before Ctrl-C, SIGTERM or SIGHUP are kept, as a partial cell: from the
                # reports the Python clients sent as they stopped, or else (Go clients, stopped with the
                # command) from the seconds they spilled.
                reports = attached_reports(interrupt) or (
                    spilled_reports(spill, spec, interrupt_description(interrupt)) if spill else ())
                partial = interrupted_result(spec, reports, interrupt_description(interrupt))
                if partial is not None:
                    self._keep(partial, params, runner, started, {"partial": True})
                raise
            # A sweep point keeps why it passed a limit, so a report finds the knee from the file alone.
            notes = {} if limits is None else {"over_limit": limits.exceeded(result)}
            self._keep(result, params, runner, started, notes)
        if not self.options.quiet:
            if result.ok:
                print(f"{cell_name(result)}: {result.ops_per_s:,.0f} ops/s, p99 {format_ns(result.latency.p99_ns)}",
                      file=sys.stderr)
            else:
                print(f"{cell_name(result)}: failed: {result.error}", file=sys.stderr)
        return result

    def _keep(self, result: LoadResult, params: dict[str, Any], runner: ClientRunner, started: float,
              notes: dict[str, Any]) -> None:
        cell = load_cell(result, params=params, runner=runner.description, duration_s=time.monotonic() - started,
                         notes=notes)
        self.writer.write(cell)
        self.cells.append(cell)
        self.results.append(result)

    def sweep(self, spec: Pacing) -> None:
        assert isinstance(spec, LoadSpec)  # options refuse --sweep for a service
        rates = self.options.sweep_rates
        if not rates:
            # The closed loop's peak throughput sets the rates to try.
            rates = default_rates(self.measure(spec, sweep="peak").ops_per_s)
        limits = self.options.limits
        sweep(spec, rates, limits, measure=lambda s: self.measure(
            s, limits, sweep="point", p99_limit_ns=limits.p99_ns, error_limit=limits.error_fraction))


def load(options: LoadOptions) -> int:
    """Run every configuration, write the results, print the tables; 1 if a configuration failed."""
    reporter = REPORTERS.get(options.format)()
    first = options.specs[0]
    if isinstance(first, LoadSpec):
        # An unreachable store or cluster is one line before any client, cluster or results file exists.
        open_store(first.store_url, namespace=first.namespace, options=first.options, server_pids=()).close()
        libraries: tuple[str, ...] = store_libraries(first.store_url)
    else:
        libraries = ("sqlalchemy",)
    runners = _runners(options)
    started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    # The clients' libraries are recorded with the rest: workers of a cluster must run the same.
    header = header_record(options.run_id, started, environment(("hdrh", "distributed", *libraries)),
                           options.run_options().to_json())  # fmt: skip
    try:
        with ExitStack() as stack:
            # Keeps what killed loads spilled, sweeps what killed runs left (their clients' semaphores too)
            # and holds this run's temporary files.
            scratch = stack.enter_context(recovered_scratch(options.run_id, "stratabench load"))
            writer = stack.enter_context(ResultsWriter(options.output, header, overwrite=options.overwrite))
            session = _Session(options, runners, writer, header, scratch)
            if options.database is not None:
                session.database_url = stack.enter_context(_parking_database(options.database))
            try:
                for spec in options.specs:
                    if options.sweep:
                        session.sweep(spec)
                    else:
                        session.measure(spec)
            except StratabenchError:
                if session.cells:
                    sys.stdout.write(reporter.render_report(run_report(session.cells, header)))
                    print(f"results so far: {options.output}", file=sys.stderr)
                raise
            except KeyboardInterrupt:
                if session.cells:  # the interrupted configuration's partial cell among them
                    print(f"results so far: {options.output}", file=sys.stderr)
                raise
    finally:
        for runner in runners.values():
            runner.close()
    # The same report `stratabench report FILE` gives: one table model for a run and its file.
    sys.stdout.write(reporter.render_report(run_report(session.cells, header)))
    print(f"results: {options.output}", file=sys.stderr)
    failed = [r for r in session.results if not r.ok]
    if failed:
        print(f"{len(failed)} of {len(session.results)} configurations failed; see the status column", file=sys.stderr)
        return 1
    return 0
