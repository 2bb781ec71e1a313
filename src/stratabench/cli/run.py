"""``stratabench run``: measure suites and print their tables."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as dt
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from stratabench.cli.arguments import (
    add_engine_arguments,
    add_format_argument,
    engine_options,
    parse_settings,
    positive_int,
)
from stratabench.cli.progress import make_progress
from stratabench.cli.signals import interrupt_description, interrupted_exit_code
from stratabench.engine.runner import execute
from stratabench.errors import UsageError
from stratabench.options import RunOptions
from stratabench.plugins import check_settings
from stratabench.report.formats import REPORTERS
from stratabench.results.environment import environment, load_average
from stratabench.results.format import header_record
from stratabench.results.writer import ResultsWriter
from stratabench.scratch import run_scratch
from stratabench.suites.kit.plan import plan_run
from stratabench.suites.kit.reports import run_tables


__all__ = ["add_parser", "new_run_id", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="measure suites (default: every default suite, on embedded backends)",
        description="Measure suites and print their tables. With no suite named, runs every default suite "
        "on embedded backends (memory, files, SQLite). Results stream to a JSON Lines file as each cell finishes.",
    )
    parser.add_argument("suites", nargs="*", metavar="SUITE", help="suites to run ('stratabench list' shows them)")
    data = parser.add_argument_group("data and layers")
    data.add_argument("--size", type=positive_int, metavar="N", help="records in each dataset (default: the study's)")
    data.add_argument("--seed", type=int, metavar="S", help="dataset seed (default: the study's)")
    data.add_argument("--codec", action="append", metavar="NAME", help="only these codecs (repeatable)")
    data.add_argument("--compressor", action="append", metavar="NAME", help="only these compressors (repeatable)")
    data.add_argument("--mapper", action="append", metavar="NAME", help="only these mappers (repeatable)")
    data.add_argument("--store", action="append", metavar="URL",
                      help="also use this store, e.g. redis://127.0.0.1:6379/0 (repeatable)")
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
    output = parser.add_argument_group("output")
    output.add_argument("-o", "--output", metavar="FILE",
                        help="results file (default: results/RUN_ID.jsonl); an existing file is refused")
    output.add_argument("--overwrite", action="store_true", help="replace an existing results file")
    add_format_argument(output)
    output.add_argument("-q", "--quiet", action="store_true", help="no progress, only the report")
    parser.set_defaults(handler=handle)


def new_run_id() -> str:
    """Time-ordered and unique: ``20261121-054500-3f2a``."""
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


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
    suites = tuple(args.suites) or (("matrix",) if args.data else ())
    settings = parse_settings(args.settings)
    check_settings(settings)  # a misspelt name is an error here, not a setting silently ignored
    options = RunOptions(
        suites=suites,
        size=args.size,
        seed=args.seed,
        codecs=tuple(args.codec or ()),
        compressors=tuple(args.compressor or ()),
        mappers=tuple(args.mapper or ()),
        stores=tuple(args.store or ()),
        data=args.data,
        settings=settings,
        run_id=run_id,
        engine=engine_options(args),
        rebuild=args.rebuild,
    )
    if options.data is not None and not Path(options.data).is_file():
        raise UsageError(f"--data {options.data}: no such file")
    output = Path(args.output or f"results/{run_id}.jsonl")
    return run(options, output, reporter(), services=args.services, overwrite=args.overwrite, quiet=args.quiet)


def _plugin_modules() -> list[str]:
    """Every module a registered plugin requires: the packages whose versions the results header records."""
    from stratabench.plugins import registries

    return [module for _, registry in registries() for info in registry for module in info.requires]


def run(options: RunOptions, output: Path, reporter: Any, *, services: str | None = None,
        overwrite: bool = False, quiet: bool = False) -> int:
    """Plan, start services, measure, write results, print the report.

    Returns 0 when every cell ran (cells that cannot run here are reported
    as unavailable and do not fail the run), 1 when a cell failed.
    """
    progress = make_progress(quiet)
    # Scratch first, so the servers' directories are inside the run's root too.
    with run_scratch(options.run_id), _services(services) as running:
        if running:
            urls = tuple(service.url for service in running.values())
            options = dataclasses.replace(options, stores=options.stores + urls)
        plan = plan_run(options, progress)
        started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        header = header_record(options.run_id, started, environment(_plugin_modules()), options.to_json(),
                               {name: service.describe() for name, service in running.items()})
        with ResultsWriter(output, header, overwrite=overwrite) as writer:
            try:
                results = execute(plan, options, writer, progress)
                writer.finish(dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                              {"load_average_end": load_average()})
            except KeyboardInterrupt as interrupt:
                print(f"{interrupt_description(interrupt)}: the cells measured so far are in {output}",
                      file=sys.stderr)
                return interrupted_exit_code(interrupt)
    sys.stdout.write(reporter.render(run_tables(results, header)))
    failed = [r for r in results if r.status == "failed"]
    print(f"results: {output}", file=sys.stderr)
    if failed:
        print(f"{len(failed)} of {len(results)} cells failed; see the status column", file=sys.stderr)
        return 1
    return 0
