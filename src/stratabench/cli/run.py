"""``stratabench run``: measure suites and print their tables."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as dt
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from stratabench.cli.arguments import (
    add_detail_argument,
    add_engine_arguments,
    add_output_arguments,
    engine_options,
    names,
    parse_settings,
    positive_int,
    whole_in,
)
from stratabench.cli.progress import make_progress
from stratabench.cli.signals import interrupt_description, interrupted_exit_code
from stratabench.engine.counting import require_valgrind
from stratabench.engine.runner import execute
from stratabench.errors import UsageError
from stratabench.input_file import file_kind
from stratabench.layers.mappers import MAPPERS
from stratabench.layers.stores import check_store_url
from stratabench.layers.stores.namespaces import new_run_id
from stratabench.load.recovery import recover_killed_loads
from stratabench.options import RunOptions
from stratabench.plugins import check_settings
from stratabench.report.counts import counts_report
from stratabench.report.document import Detail
from stratabench.report.formats import REPORTERS
from stratabench.results.environment import environment, load_average, scheduler_counters
from stratabench.results.format import header_record
from stratabench.results.writer import ResultsWriter
from stratabench.scratch import run_scratch
from stratabench.suites import SUITES
from stratabench.suites.kit.plan import cell_key, describe_plan, estimate_seconds, plan_run, previous_durations
from stratabench.suites.kit.reports import run_report


__all__ = ["add_parser", "plugin_modules", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="measure suites (default: every default suite, on embedded backends)",
        description="Measure suites and print their tables. With no suite named, runs every default suite "
        "on embedded backends (memory, files, SQLite). Results stream to a JSON Lines file as each cell finishes.",
    )
    parser.add_argument("suites", nargs="*", metavar="SUITE",
                        help="suites to run, by name or as a comma list ('stratabench list' shows them)")
    parser.add_argument("--full", action="store_true",
                        help="the named studies' reference grids instead of their everyday defaults (bulkload: the "
                        "seed's 100,000 records, not 10,000; treestore: N = 1,000, 10,000 and 100,000 with 10 tries, "
                        "as sysrepo published, hours with servers); "
                        "refused for a suite that has no such grid")
    parser.add_argument("--quick", action="store_true",
                        help=f"a first look: {QUICK_SIZE:,} records per dataset (unless --size), sampled as --fast "
                        "(unless a sampling option is given); the answers are rougher, the tables the same")
    data = parser.add_argument_group("data and layers")
    data.add_argument("--size", type=positive_int, metavar="N", help="records in each dataset (default: the study's)")
    data.add_argument("--seed", type=whole_in(-(2**63), 2**63 - 1), metavar="S", help="dataset seed (default: the study's)")
    data.add_argument("--codec", action="append", metavar="NAME",
                      help="only these codecs (repeatable, or a comma list: json,msgpack)")
    data.add_argument("--compressor", action="append", metavar="NAME",
                      help="only these compressors (repeatable, or a comma list)")
    data.add_argument("--mapper", action="append", metavar="NAME",
                      help="only the entities cells that go through these object mappers (repeatable, or a comma list)")
    data.add_argument("--store", action="append", metavar="URL",
                      help="also use this store, e.g. redis://127.0.0.1:6379/0 (repeatable; not a comma list, "
                      "since a URL may hold commas)")
    data.add_argument("--data", metavar="FILE",
                      help="your own records (JSON Lines or CSV) for the matrix suite, which then runs when no "
                      "suite is named")
    data.add_argument("--services", choices=["local"],
                      help="'local': start private Redis, memcached, PostgreSQL, MariaDB and MongoDB servers on "
                      "loopback for this run, and stop them after")
    data.add_argument("--set", action="append", metavar="PLUGIN.SETTING=VALUE", dest="settings",
                      help="a plugin setting, e.g. sqlite.journal_mode=wal (repeatable; "
                      "'stratabench list settings' shows them all)")
    add_engine_arguments(parser)
    parser.add_argument("--rebuild", action="store_true",
                        help="build the Go programs and the embed asset anew instead of reusing the build cache "
                        "($STRATABENCH_CACHE_DIR, else ~/.cache/stratabench)")
    add_output_arguments(parser)
    add_detail_argument(parser)
    parser.add_argument("--dry-run", action="store_true",
                        help="check every option and print the plan (suites and their cells), then exit "
                        "without starting a server or measuring anything")
    parser.set_defaults(handler=handle)


#: ``--quick``: records per dataset, and the sampling it sets unless given.
QUICK_SIZE = 2_000


@contextlib.contextmanager
def _services(kind: str | None) -> Iterator[dict[str, Any]]:
    """Start private servers for the run when asked; yields name → running service."""
    if kind is None:
        yield {}
        return
    from stratabench.services.session import local_services

    with local_services(()) as running:
        for name, error in running.failures.items():
            print(f"warning: local {name} server not started, its cells are left out: {error.message}",
                  file=sys.stderr)
        yield running


def handle(args: argparse.Namespace) -> int:
    reporter = REPORTERS.get(args.format)
    run_id = new_run_id()
    # Your own records are what the matrix suite is for: with no suite named,
    # --data means "measure my file", not "run the studies and ignore it".
    suites = names(args.suites, "SUITE") or (("matrix",) if args.data else ())
    if args.quick:
        _quick(args)
    if args.full:
        _check_full(suites)
    settings = parse_settings(args.settings)
    check_settings(settings)  # a misspelt name is an error here, not a setting silently ignored
    for url in args.store or ():
        check_store_url(url)  # a malformed URL stops the run before any server starts
    for mapper in names(args.mapper, "--mapper"):
        MAPPERS.info(mapper)  # an unknown name is an error, not a filter that keeps everything
    options = RunOptions(
        suites=suites,
        size=args.size,
        seed=args.seed,
        codecs=names(args.codec, "--codec"),
        compressors=names(args.compressor, "--compressor"),
        mappers=names(args.mapper, "--mapper"),
        stores=tuple(args.store or ()),
        data=args.data,
        settings=settings,
        run_id=run_id,
        engine=engine_options(args),
        rebuild=args.rebuild,
        full=args.full,
    )
    if options.data is not None:
        _check_data_file(options.data)
    if options.engine.count is not None:
        require_valgrind()  # exit 69 naming the package, before a server starts or a cell runs
    output = _output_path(args.output, run_id)
    if args.dry_run:
        return _print_plan(options)
    return run(options, output, reporter(), services=args.services, overwrite=args.overwrite, quiet=args.quiet,
               detail=args.detail)


def _quick(args: argparse.Namespace) -> None:
    """``--quick``: a smaller dataset, sampled as ``--fast``, where the user kept the defaults."""
    args.size = args.size or QUICK_SIZE
    chosen = (getattr(args, "preset", None), args.samples, args.min_time, args.target, args.budget)
    if all(option is None for option in chosen):
        args.preset = "fast"


def _check_full(suites: tuple[str, ...]) -> None:
    """``--full`` names the suites it applies to: each must have a reference grid."""
    having = [info.name for info in SUITES if info.cls.full_grid]
    if not suites:
        raise UsageError(f"--full: name the study to run at full size ({', '.join(having)}); "
                         "the default run has no full grid")
    without = [name for name in suites if not SUITES.info(name).cls.full_grid]
    if without:
        raise UsageError(f"--full: {', '.join(without)} has no reference grid; only {', '.join(having)} has one")


def _check_data_file(path: str) -> None:
    """``--data`` must be a regular file; anything else is named for what it is."""
    if not path.strip():
        raise UsageError("--data is empty; give the name of a JSON Lines or CSV file of records")
    try:
        mode = Path(path).stat().st_mode
    except FileNotFoundError:
        raise UsageError(f"--data {path}: no such file") from None
    except OSError as error:
        raise UsageError(f"--data {path}: cannot read ({error.strerror})") from None
    if stat.S_ISREG(mode):
        return
    raise UsageError(f"--data {path}: is {file_kind(mode)}; give a JSON Lines or CSV file of records")


def _output_path(given: str | None, run_id: str) -> Path:
    """``--output``: a file; a name ending in ``/`` is a directory that gets ``RUN_ID.jsonl`` in it."""
    if given is None:
        return Path(f"results/{run_id}.jsonl")
    if given.endswith(("/", os.sep)):
        return Path(given) / f"{run_id}.jsonl"
    return Path(given)


def _print_plan(options: RunOptions) -> int:
    """``--dry-run``: the cells each suite would measure, one line a suite, then one a cell."""
    plan = plan_run(options, make_progress(True))
    print(f"{plan.total} cells in {len(plan.suites)} suites (dry run: nothing measured)")
    for _, cells in plan.suites:
        print(f"{cells[0].suite if cells else 'a suite'}: {len(cells)} cells")
        for cell in cells:
            print(f"  {cell.name}")
    return 0


def plugin_modules() -> list[str]:
    """Every module a registered plugin requires: the packages whose versions the results header records."""
    from stratabench.plugins import registries

    return [module for _, registry in registries() for info in registry for module in info.requires]


@contextlib.contextmanager
def recovered_scratch(run_id: str, command: str) -> Iterator[Path]:
    """The command's scratch root, made after the seconds of any ``load`` killed with kill -9 are kept.

    The scratch's sweep removes a dead command's root, its load spill
    included, so the spill is turned into a results file first
    (:func:`~stratabench.load.recovery.recover_killed_loads`), each file said
    in one line.
    """
    for line in recover_killed_loads(command):
        print(line, file=sys.stderr)
    with run_scratch(run_id) as scratch:
        yield scratch


def run(options: RunOptions, output: Path, reporter: Any, *, services: str | None = None,
        overwrite: bool = False, quiet: bool = False, detail: Detail = "tables") -> int:
    """Plan, start services, measure, write results, print the report.

    Returns 0 when every cell ran (cells that cannot run here are reported
    as unavailable and do not fail the run), 1 when a cell failed.
    """
    progress = make_progress(quiet)
    # Scratch first, so the servers' directories are inside the run's root too.
    with recovered_scratch(options.run_id, "stratabench run"), _services(services) as running:
        if running:
            urls = tuple(service.url for service in running.values())
            options = dataclasses.replace(options, stores=options.stores + urls)
        plan = plan_run(options, progress)
        previous = previous_durations(output.parent)
        estimates = {(cell.suite, cell.name): estimate_seconds(cell, options, previous)
                     for _, cells in plan.suites for cell in cells}
        measured = sum(1 for _, cells in plan.suites for cell in cells
                       if cell_key(cell.suite, cell.name, cell.params) in previous)
        progress.expect(estimates)
        started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        header = header_record(options.run_id, started, environment(plugin_modules()), options.to_json(),
                               {name: service.describe() for name, service in running.items()})
        with ResultsWriter(output, header, overwrite=overwrite) as writer:
            if not quiet:  # once the results file is open: a refused output is the only line
                print(describe_plan(plan, estimates, measured), file=sys.stderr, flush=True)
            try:
                results = execute(plan, options, writer, progress)
                # What is known only at the end: the load, steal and run-queue wait then, and the
                # reference workload of every round, which the report's provenance reads from here.
                end = {"load_average_end": load_average(), **scheduler_counters("end"),
                       "reference_ns": [record["reference_ns"] for record in writer.rounds],
                       "reference_at_s": [record["at_s"] for record in writer.rounds]}
                writer.finish(dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), end)
                header["environment"].update(end)
            except KeyboardInterrupt as interrupt:
                print(f"{interrupt_description(interrupt)}: the cells measured so far are in {output}",
                      file=sys.stderr)
                return interrupted_exit_code(interrupt)
    report = counts_report(results, header, detail) if options.engine.count else run_report(results, header, detail)
    sys.stdout.write(reporter.render_report(report))
    failed = [r for r in results if r.status == "failed"]
    print(f"results: {output}", file=sys.stderr)
    if failed:
        print(f"{len(failed)} of {len(results)} cells failed; see the status column", file=sys.stderr)
        return 1
    return 0
