"""``stratabench compare BEFORE AFTER``: the same cells of two runs, each pair tested."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from stratabench.cli.arguments import add_format_argument, fraction, number_in
from stratabench.cli.summary import STEP_SUMMARY, add_summary_argument, write_summary
from stratabench.errors import NoCellsError, UsageError
from stratabench.metrics import METRICS
from stratabench.report.comparison import CANNOT_JUDGE, INCONCLUSIVE, MIN_VALUES, Comparison, DEFAULT_MIN_EFFECT, compare_results, comparison_table
from stratabench.report.formats import REPORTERS
from stratabench.report.summary import markdown_summary
from stratabench.cli.report import read_results
from stratabench.results.format import ResultsFile

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compare", help="compare two results files cell by cell (family-level t intervals of the ratios, a CI gate)",
        description="Pair the cells two runs have in common (same suite, cell name and parameters) and test "
        "each pair on its per-round values (raw samples for files from before rounds and cells measured outside "
        "rounds): the ratio of geometric means (second/first) with Welch's t interval of the log-ratio at the "
        "family level, 1 - 5% / cells compared, so that two runs of identical code call any cell changed at most "
        "one time in 20. A cell is slower or faster (larger or smaller) only when that interval excludes 1 and the "
        "ratio is beyond --min-effect; unchanged when the interval rules out a change that large; inconclusive "
        "otherwise; a pair with fewer than three values a side is 'cannot judge'. With --fail-above, exit 1 when a "
        "cell got worse by more than that factor, a cell cannot be judged (no test can rule out a regression "
        "there), or a cell failed in either file, and refuse to pass a comparison of nothing (exit 65): a "
        "regression gate for CI.",
    )
    parser.add_argument("before", help="the first (baseline) results file")
    parser.add_argument("after", help="the second results file")
    parser.add_argument("--metric", default=None,
                        help="the metric to compare (default: each cell's judged metric, thread_cpu_ns for work "
                        "inside the worker and wall_ns for cells that wait on files or servers; instructions for two "
                        "counted runs, judged exactly by its tolerance)")
    parser.add_argument("--min-effect", type=fraction(0, 10), default=DEFAULT_MIN_EFFECT, metavar="FRACTION",
                        help="smallest change called a change, as 0.05 or 5%% (default 5%%); a change's interval "
                        "must also exclude 1, so noise beyond it is inconclusive, not a change")
    add_format_argument(parser)
    parser.add_argument("--fail-above", type=number_in(1, 1000), metavar="FACTOR",
                        help="exit 1 if a cell is called worse by more than FACTOR (1.10: 10%% worse), has too "
                        "few values to judge (fewer than 3 a side), or failed in either file; exit 65 if no cell could "
                        "be compared")
    add_summary_argument(parser)
    parser.set_defaults(handler=handle)


def _refuse_nothing(before: ResultsFile, after: ResultsFile, source: str) -> None:
    """The gate's refusals: a comparison of nothing has not passed."""
    if not after.cells:
        raise NoCellsError(f"{source}: no cells; the run measured nothing, so the gate cannot pass")
    if not any(cell.ok for cell in after.cells):
        raise NoCellsError(f"{source}: every one of its {len(after.cells)} cells failed; the gate cannot pass")
    if not before.cells:
        raise NoCellsError("the first file has no cells; there is no baseline to gate on")


def _default_metric(*files: ResultsFile) -> str | None:
    """Each cell's judged metric (``None``), unless both files were counted (``--count instructions``) rather than timed."""
    counted = all(any("instructions" in cell.metrics for cell in results.cells) and
                  not any("wall_ns" in cell.metrics for cell in results.cells) for results in files)
    return "instructions" if counted else None


def handle(args: argparse.Namespace) -> int:
    if args.metric is not None and args.metric not in METRICS:
        raise UsageError(f"--metric {args.metric!r} is not a metric; known: {', '.join(METRICS)}")
    reporter = REPORTERS.get(args.format)()
    before, after = read_results(args.before), read_results(args.after)
    args.metric = args.metric or _default_metric(before, after)
    if args.fail_above is not None:
        _refuse_nothing(before, after, args.after)
    comparison = compare_results(before, after, args.metric, min_effect=args.min_effect)
    table = comparison_table(comparison, before, after)
    sys.stdout.write(reporter.render([table]))
    print(comparison.summary(), file=sys.stderr)
    for exact in comparison.exact_changes:
        print(f"exact change: {exact.line()}", file=sys.stderr)
    code = _gate(args, comparison) if args.fail_above is not None else 0
    if args.summary or os.environ.get(STEP_SUMMARY):
        verdict = _verdict_line(args.fail_above, code, comparison)
        write_summary(markdown_summary(f"stratabench compare: {args.before} → {args.after}", verdict, table,
                                       # Moved or unjudged; an inconclusive cell is counted in the verdict line.
                                       lambda row: not row["verdict"].startswith(("unchanged", INCONCLUSIVE)),
                                       [f"exact change: {change.line()}" for change in comparison.exact_changes]),
                      args.summary)
    return code


def _verdict_line(fail_above: float | None, code: int, comparison: Comparison) -> str:
    up, down = comparison.metric.change_words
    moved = f"{comparison.counts[up] + comparison.counts[down]} of {len(comparison.changes)} cells moved"
    if comparison.counts[INCONCLUSIVE]:
        moved += f", {comparison.counts[INCONCLUSIVE]} {INCONCLUSIVE}"
    if comparison.counts[CANNOT_JUDGE]:
        moved += f", {comparison.counts[CANNOT_JUDGE]} {CANNOT_JUDGE}"
    return moved if fail_above is None else f"gate {'failed' if code else 'passed'} (--fail-above {fail_above:g}): {moved}"


def _gate(args: argparse.Namespace, comparison: Comparison) -> int:
    """``--fail-above``: print each reason to fail, and return 1 if there is one."""
    if not comparison.changes:
        raise NoCellsError(
            f"no cell of {args.after} matches a measured cell of {args.before} on {args.metric or 'its judged metric'}; "
            "a gate that compared nothing has not passed"
        )
    worse = comparison.regressions(args.fail_above)
    for change in worse:
        test = change.test
        print(f"regression: {change.suite} {change.cell}: {test.ratio:.3f}× (interval {test.low:.3f}–{test.high:.3f}, "
              f"p={test.p_text}; limit {args.fail_above:g}×)", file=sys.stderr)
    exact_worse = comparison.exact_regressions(args.fail_above)
    for exact in exact_worse:
        print(f"regression: {exact.line()}; limit {args.fail_above:g}×", file=sys.stderr)
    # A pair with too few values for any test could hide a regression of any size: a gate must not pass it.
    unjudged = comparison.unjudged()
    for change in unjudged:
        before_n, after_n = change.values
        print(f"cannot judge: {change.suite} {change.cell}: {change.test.ratio:.3f}× from {before_n} and {after_n} "
              f"values (fewer than {MIN_VALUES} a side: no test can rule out a regression of any size); fails the "
              "gate; rerun both with more rounds or tries", file=sys.stderr)
    for line in comparison.failed:
        print(f"failed cell: {line}", file=sys.stderr)
    inconclusive = comparison.inconclusive()
    if inconclusive:
        by_width = sorted(inconclusive, key=lambda change: change.could_hide)
        middle, widest = by_width[len(by_width) // 2], by_width[-1]
        print(f"{len(inconclusive)} of {len(comparison.changes)} cells inconclusive (neither a change beyond "
              f"{args.min_effect:.0%} nor its absence shows; they could hide a change of up to "
              f"{middle.could_hide_text} (median) to {widest.could_hide_text} ({widest.suite} {widest.cell}, from "
              f"{widest.values[0]} and {widest.values[1]} values)); the gate does not fail on them, "
              "more rounds (--min-samples) would settle them", file=sys.stderr)
    return 1 if worse or exact_worse or unjudged or comparison.failed else 0
