"""``stratabench advise``: what to use for these records, on these stores, toward this goal."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import multiprocessing.util
import sys
from typing import Any

from stratabench.cli.arguments import add_output_arguments, names, number_in, positive_int
from stratabench.cli.progress import make_progress
from stratabench.cli.run import _check_data_file, _output_path, _services, recovered_scratch
from stratabench.layers.stores.namespaces import new_run_id
from stratabench.layers.stores import check_store_url
from stratabench.report.formats import REPORTERS
from stratabench.results.environment import environment, load_average
from stratabench.results.format import header_record
from stratabench.results.writer import ResultsWriter
from stratabench.errors import UsageError
from stratabench.suites.matrix.advise import CACHE_TIERS, DEFAULT_HIT_RATIO, AdviseOptions, advice_report, advise
from stratabench.suites.matrix.goals import DEFAULT_PRICES, parse_goal, parse_prices

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "advise",
        help="for your records and stores, toward a goal: which codec, compressor and store, with evidence",
        description="Measure what the choice needs on your own records (every codec x compressor, then the best "
        "few on each store, then a short load run of the finalists) and recommend one, with its evidence, the "
        "runner-up, what would change the choice and its cost per million reads. A goal no candidate meets is "
        "refused, with the closest candidate and its gap (exit 1).",
    )
    parser.add_argument("--data", required=True, metavar="FILE", help="your records: JSON Lines or CSV (never written)")
    parser.add_argument("--store", action="append", metavar="URL",
                        help="a store to consider, e.g. redis://127.0.0.1:6379/0 (repeatable); without one, and "
                        "without --services, the embedded stores (SQLite, LMDB)")
    parser.add_argument("--services", choices=["local"],
                        help="'local': start private Redis, memcached, PostgreSQL, MariaDB and MongoDB servers on "
                        "loopback and consider each")
    parser.add_argument("--goal", default="cheapest", metavar="GOAL",
                        help="limits and what to choose among the candidates meeting them: 'p99<2ms,memory<200MB' "
                        "(the cheapest that meets both), 'fastest,stored<1GB', or 'cheapest' (the default); "
                        "measures: p50, p99, memory, stored, cost (dollars per million reads)")
    parser.add_argument("--price", action="append", metavar="NAME=DOLLARS",
                        help=f"a price of the cost per million reads (repeatable): cpu_hour (default "
                        f"{DEFAULT_PRICES.cpu_hour:g} per vCPU-hour), wire_gb ({DEFAULT_PRICES.wire_gb:g} per GB), "
                        f"stored_gb_month ({DEFAULT_PRICES.stored_gb_month:g} per GB-month)")
    parser.add_argument("--codec", action="append", metavar="NAME", help="only these codecs (repeatable, or a comma list)")
    parser.add_argument("--compressor", action="append", metavar="NAME",
                        help="only these compressors (repeatable, or a comma list)")
    parser.add_argument("--cache-tier", action="append", metavar="TIER",
                        help=f"also weigh this cache tier in front of the recommended store (repeatable, or a comma "
                        f"list): {', '.join(CACHE_TIERS)}; 'memory' is a store in the process's memory; memcached "
                        f"and redis need such a --store (or --services local), which is then weighed as a cache "
                        f"(not as the store) in front of a store that is not itself a cache, the embedded "
                        f"stores when no other server is given")
    parser.add_argument("--hit-ratio", type=number_in(0, 1, what="a share of reads", low_open=True),
                        default=DEFAULT_HIT_RATIO, metavar="R",
                        help=f"the share of reads a cache tier answers (default {DEFAULT_HIT_RATIO:g})")
    parser.add_argument("--clients", type=positive_int, default=2, metavar="C",
                        help="concurrent clients of the load run (default 2)")
    add_output_arguments(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    reporter = REPORTERS.get(args.format)()
    goal = parse_goal(args.goal)  # a bad goal or price stops here, before any server starts
    prices = parse_prices(args.price)
    tiers = names(args.cache_tier, "--cache-tier")
    unknown = [tier for tier in tiers if tier not in CACHE_TIERS]
    if unknown:
        raise UsageError(f"--cache-tier {','.join(unknown)}: no such tier; use {', '.join(CACHE_TIERS)}")
    _check_data_file(args.data)
    for url in args.store or ():
        check_store_url(url)
    run_id = new_run_id()
    output = _output_path(args.output, run_id)
    options = AdviseOptions(data=args.data, stores=tuple(args.store or ()), goal=goal, prices=prices, run_id=run_id,
                            codecs=names(args.codec, "--codec"), compressors=names(args.compressor, "--compressor"),
                            clients=args.clients, tiers=tiers, hit_ratio=args.hit_ratio)
    # The load step's client processes make multiprocessing's temporary directory; made now, it lives
    # outside the run's scratch root, which is gone by the time multiprocessing removes it at exit.
    multiprocessing.util.get_temp_dir()
    with recovered_scratch(run_id, "stratabench advise") as scratch, _services(args.services) as running:
        options = dataclasses.replace(options, stores=options.stores + tuple(s.url for s in running.values()),
                                      workdir=scratch)
        started = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        header = header_record(run_id, started, environment(), options.run_options().to_json(),
                               {name: service.describe() for name, service in running.items()})
        with ResultsWriter(output, header, overwrite=args.overwrite) as writer:
            advice = advise(options, writer, lambda: make_progress(args.quiet))
            writer.finish(dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                          {"load_average_end": load_average()})
    sys.stdout.write(reporter.render_report(advice_report(advice, header)))
    print(f"results: {output}", file=sys.stderr)
    return 1 if advice.refused else 0
