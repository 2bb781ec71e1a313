"""``stratabench compare BEFORE AFTER``: the same cells of two runs, side by side."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from stratabench.cli.arguments import add_format_argument, number_at_least
from stratabench.errors import UsageError
from stratabench.metrics import METRICS
from stratabench.report.comparison import compare_results, comparison_table
from stratabench.report.formats import REPORTERS
from stratabench.results.format import load

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compare", help="compare two results files cell by cell (ratios of medians, noise flagged)",
        description="Pair the cells two runs have in common and print each metric's ratio of medians "
        "(second/first), marked when the confidence intervals overlap. With --fail-above, exit 1 when a "
        "cell got worse by more than that factor beyond noise: a regression gate for CI.",
    )
    parser.add_argument("before", help="the first (baseline) results file")
    parser.add_argument("after", help="the second results file")
    parser.add_argument("--metric", default="wall_ns", help="the metric to compare (default wall_ns)")
    add_format_argument(parser)
    parser.add_argument("--fail-above", type=number_at_least(1, below="must be 1 or more, for example 1.10 for 10% slower"), metavar="FACTOR",
                        help="exit 1 if a cell's ratio exceeds FACTOR and is not within noise")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.metric not in METRICS:
        raise UsageError(f"--metric {args.metric!r} is not a metric; known: {', '.join(METRICS)}")
    reporter = REPORTERS.get(args.format)()
    before, after = load(args.before), load(args.after)
    changes, skipped = compare_results(before, after, args.metric)
    sys.stdout.write(reporter.render([comparison_table(changes, skipped, args.metric, before, after)]))
    if args.fail_above is None:
        return 0
    worse = [c for c in changes if not c.ratio.within_noise and c.ratio.value > args.fail_above]
    for change in worse:
        print(f"regression: {change.suite} {change.cell}: {change.ratio} (limit {args.fail_above}×)", file=sys.stderr)
    return 1 if worse else 0
