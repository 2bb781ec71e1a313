"""``stratabench ab``: two sides measured in one run, cell by cell, in randomized ABBA rounds.

A side (``--a``, ``--b``) is one of:

- a Python environment: a path to an interpreter or to a virtual
  environment's directory (``../base/.venv``); each side gets zygotes of its
  own, so two versions of a library, or of stratabench itself, compare;
- a setting: ``PLUGIN.SETTING=VALUE`` (as ``--set``), on this environment;
- a store: a URL (``redis://127.0.0.1:6380/0``), added to the run's stores.

``--a`` defaults to this environment as it is. Both sides plan their cells
with the same options; a cell only one side planned is listed, not
compared. See :mod:`stratabench.engine.ab` for the rounds and
:mod:`stratabench.report.ab` for the verdicts.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from stratabench.cli.arguments import (
    add_engine_arguments,
    add_output_arguments,
    engine_options,
    fraction,
    names,
    number_in,
    parse_settings,
    positive_int,
    whole_in,
)
from stratabench.cli.progress import make_progress
from stratabench.cli.run import plugin_modules, recovered_scratch
from stratabench.layers.stores.namespaces import new_run_id
from stratabench.cli.summary import STEP_SUMMARY, add_summary_argument, write_summary
from stratabench.engine.ab import SIDES, AbCell, ForkedMeasure, Side, run_until_sure
from stratabench.engine.counting import require_valgrind, uncountable
from stratabench.engine.operation import CellSpec
from stratabench.engine.runner import ExternalRunner
from stratabench.errors import NoCellsError, StratabenchError, UsageError
from stratabench.layers.stores import check_store_url
from stratabench.lifeline import popen_tied
from stratabench.metrics import METRICS, metric
from stratabench.options import RunOptions
from stratabench.plugins import check_settings
from stratabench.redact import redact
from stratabench.report.ab import AbVerdict, ab_summary, ab_table, family_level, judge
from stratabench.report.comparison import DEFAULT_MIN_EFFECT
from stratabench.report.counts import counts_notes
from stratabench.report.formats import REPORTERS
from stratabench.report.summary import markdown_summary
from stratabench.results.environment import environment
from stratabench.results.format import cell_from_json, header_record
from stratabench.results.records import WALL_METRIC, CellResult
from stratabench.results.writer import ResultsWriter
from stratabench.suites.kit.plan import plan_run, store_drivers

__all__ = ["ROUND_MIN_TIME_S", "ROUND_SAMPLES", "ROUND_WARMUPS", "add_parser"]

#: Rounds by default: six pairs give a median's interval of 96.9%.
DEFAULT_ROUNDS = 6
#: A visit's sampling by default (unless --samples, --warmups, --min-time): short, since the rounds give the spread
#: (a new zygote's layout moves a cell 3-9% from round to round, more than its samples within a visit differ).
#: Two samples and no warm-up after the cell's first visit (which calibrates, and its calibration warms): the
#: least of the two is the visit's value, so a first sample that pays the fork's cold pages is not the one kept.
#: ab visits every cell twice a round where run visits it once; with a warm-up and 3 samples of 20 ms, ab over the
#: default suites took 3.85x one run (781 s against 203 s), its Python visits 528 s of 1008 in a profiled run.
ROUND_SAMPLES = 2
ROUND_WARMUPS = 0
ROUND_MIN_TIME_S = 0.01
#: The settings that set how many values a visit of a suite measured outside a Python worker takes: in ab, as many
#: as a Python visit's samples unless set, since here too the rounds give the spread. With run's 3 (the fewest
#: compare can judge in one visit), treestore and parking took 220 of 704 s of ab over the default suites.
VISIT_COUNT_SETTINGS = ("treestore.tries", "parking.runs")


def visit_settings(samples: int | None, given: Mapping[str, str]) -> dict[str, str]:
    """The run's settings: ``given`` (the user's ``--set``), and :data:`VISIT_COUNT_SETTINGS` at ``samples`` unless given."""
    counts = {name: str(samples) for name in VISIT_COUNT_SETTINGS if samples is not None}
    return {**counts, **given}


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ab", help="measure two sides (environments, settings, stores) in one interleaved run, cell by cell",
        description="Measure the same cells on two sides in one run, in randomized ABBA rounds (each round "
        "shuffles the cells and runs a cell's two sides back to back, A first in even rounds, B first in odd), "
        "and give each cell the geometric mean of its per-round ratios B/A (of each visit's least sample) with its interval and one of slower, "
        "faster, unchanged, inconclusive. The interval is the t interval of the mean log-ratio at the family level "
        "1 - 5% / (cells compared x looks; a look: the first judgement and each --until-sure pair), so the chance "
        "that any unchanged cell of the run is called changed is at most 5%. A change: the interval excludes 1 "
        "and the ratio is beyond --min-effect; unchanged: the whole interval within --min-effect of 1; else "
        "inconclusive. A side is a Python interpreter or venv (its own zygote), a setting PLUGIN.SETTING=VALUE, "
        "or a store URL.",
    )
    parser.add_argument("suites", nargs="*", metavar="SUITE", help="suites to run (default: every default suite)")
    parser.add_argument("--a", default="", metavar="SIDE",
                        help="side A, the baseline: a Python interpreter or venv, a setting PLUGIN.SETTING=VALUE, "
                        "or a store URL (default: this environment as it is)")
    parser.add_argument("--b", required=True, metavar="SIDE", help="side B, the same kinds as --a")
    parser.add_argument("--size", type=positive_int, metavar="N", help="records in each dataset (default: the study's)")
    parser.add_argument("--seed", type=whole_in(-(2**63), 2**63 - 1), metavar="S",
                        help="dataset seed (default: the study's)")
    for flag, what in (("--codec", "codecs"), ("--compressor", "compressors"), ("--mapper", "object mappers")):
        parser.add_argument(flag, action="append", metavar="NAME", help=f"only these {what} (repeatable, or a comma list)")
    parser.add_argument("--set", action="append", metavar="PLUGIN.SETTING=VALUE", dest="settings",
                        help="a plugin setting for both sides (repeatable)")
    parser.add_argument("--store", action="append", metavar="URL", help="also use this store, on both sides")
    parser.add_argument("--rounds", type=whole_in(2, 1000), default=DEFAULT_ROUNDS, metavar="N",
                        help=f"ABBA rounds (default {DEFAULT_ROUNDS}); each visits every cell on both sides")
    parser.add_argument("--until-sure", type=whole_in(0, 1000), default=0, metavar="N",
                        help="then measure inconclusive cells again, two rounds at a time, up to N more rounds "
                        "(each pair is one more look, paid for in the family level)")
    parser.add_argument("--order-seed", type=whole_in(0, 2**63 - 1), default=None, metavar="S",
                        help="seed of the rounds' order (default: random, recorded in the results header)")
    parser.add_argument("--metric", default=None,
                        help="the metric to compare (default cpu_ns, the worker's CPU time: on a loaded 2-core "
                        "machine its per-round ratios held within 2%% where wall_ns's spread ±25%%; wall_ns to "
                        "include waiting on I/O and servers; instructions with --count instructions). By default a cell with "
                        "no worker CPU time (Go, treestore's worker, parking's server) is judged on wall_ns, and its "
                        "row says so")
    parser.add_argument("--min-effect", type=fraction(0, 10), default=DEFAULT_MIN_EFFECT, metavar="FRACTION",
                        help="smallest change called a change (default 5%%)")
    parser.add_argument("--fail-above", type=number_in(1, 1000), metavar="FACTOR",
                        help="exit 1 if a cell is slower (worse) by more than FACTOR (1.10: 10%% worse)")
    add_engine_arguments(parser, samples=ROUND_SAMPLES, warmups=ROUND_WARMUPS)
    add_output_arguments(parser)
    add_summary_argument(parser)
    parser.set_defaults(handler=handle)


def _side(label: str, text: str, base: RunOptions) -> Side:
    """A side from its command-line text; a path that is no Python with stratabench is refused by :func:`_plan_in`."""
    flag = f"--{label.lower()}"
    if not text:
        return Side(label, "this environment", base, sys.executable)
    if "://" in text:
        check_store_url(text)
        return Side(label, f"store {redact(text)}", dataclasses.replace(base, stores=base.stores + (text,)),
                    sys.executable)
    path = Path(text)
    if "=" in text and not path.exists():
        settings = parse_settings([text])
        check_settings(settings)
        return Side(label, f"--set {text}", dataclasses.replace(base, settings={**base.settings, **settings}),
                    sys.executable)
    python = path / "bin" / "python" if path.is_dir() else path
    if not (python.is_file() and os.access(python, os.X_OK)):
        raise UsageError(f"{flag} {text}: not a Python interpreter or a virtual environment's directory "
                         "(nor a setting NAME=VALUE, nor a store URL)")
    return Side(label, f"python {python}", base, str(python))


#: Run in another environment's interpreter: plan the cells there and describe the environment.
_PLAN_THERE = """
import json, sys
from stratabench.options import RunOptions
from stratabench.results.environment import environment
from stratabench.plugins import registries
from stratabench.suites.kit.plan import plan_run
class Quiet:
    def warn(self, message): print(message, file=sys.stderr)
plan = plan_run(RunOptions.from_json(json.loads(sys.stdin.read())), Quiet())
print(json.dumps({"cells": [cell.to_json() for _, cells in plan.suites for cell in cells],
                  "environment": environment([m for _, r in registries() for info in r for m in info.requires])}))
"""


#: Run in another environment's interpreter for the run: its external (Go) cells through its own stratabench and
#: its own Go build. One JSON line in (the options), then per batch one line in (a suite's cells, workdir) and one
#: line out per result, then one line that ends the batch (done, or the adapter's error).
_RUN_THERE = """
import json, sys
from pathlib import Path
from stratabench.engine.cell import status_of
from stratabench.engine.operation import CellSpec
from stratabench.errors import StratabenchError
from stratabench.options import RunOptions
from stratabench.results.format import cell_to_json
from stratabench.suites.kit.plan import plan_run
answers, sys.stdout = sys.stdout, sys.stderr  # whatever else prints must not enter the answers
class Quiet:
    def warn(self, message): print(message, file=sys.stderr)
plan = plan_run(RunOptions.from_json(json.loads(sys.stdin.readline())), Quiet())
runners = {(cell.suite, cell.name): runner for runner, cells in plan.suites for cell in cells}
for line in sys.stdin:
    request = json.loads(line)
    cells = [CellSpec.from_json(cell) for cell in request["cells"]]
    try:
        for result in runners[(cells[0].suite, cells[0].name)].run_external(cells, Path(request["workdir"])):
            print(json.dumps({"result": cell_to_json(result)}), file=answers, flush=True)
        answer = {"done": True}
    except StratabenchError as error:
        answer = {"status": status_of(error), "error": error.message}
    print(json.dumps(answer), file=answers, flush=True)
"""


class _EnvironmentRunner:
    """A side's external (Go) cells, run by that environment's own stratabench: two checkouts, two Go builds.

    One process for the run (started at the first cell, so a plan without Go
    cells costs nothing); it plans once with the side's options and then runs
    one batch (a suite's cells) per request, in ``ab``'s order like any other visit.
    """

    def __init__(self, side: Side) -> None:
        self.side = side
        self.process: subprocess.Popen[bytes] | None = None

    def run_external(self, cells: Sequence[CellSpec], workdir: Path) -> Iterator[CellResult]:
        if self.process is None:
            self.process = popen_tied([self.side.python, "-c", _RUN_THERE], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            self._send(self.side.options.to_json())
        self._send({"cells": [cell.to_json() for cell in cells], "workdir": str(workdir)})
        pending = {cell.name: cell for cell in cells}
        assert self.process.stdout is not None
        while line := self.process.stdout.readline():
            answer = json.loads(line)
            if "result" in answer:
                result = cell_from_json(answer["result"])
                pending.pop(result.cell, None)
                yield result
            elif "done" in answer:
                return
            else:
                for cell in pending.values():
                    yield CellResult.failure(cell, answer["status"], answer["error"])
                return
        raise StratabenchError(f"side {self.side.label}'s environment ({self.side.python}) stopped running "
                               f"its Go cells (exit {self.process.wait()})")

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process is not None and self.process.stdin is not None
        try:
            self.process.stdin.write((json.dumps(message) + "\n").encode())
            self.process.stdin.flush()
        except BrokenPipeError:
            pass  # the process ended: the answer's read says so

    def close(self) -> None:
        if self.process is not None:
            if self.process.stdin is not None:
                self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            if self.process.stdout is not None:
                self.process.stdout.close()


def _plan_in(side: Side, stack: ExitStack) -> tuple[list[tuple[CellSpec, ExternalRunner | None]], dict[str, Any]]:
    """The side's cells (an external cell with the adapter that runs it there) and its environment record."""
    if side.python == sys.executable:
        plan = plan_run(side.options, make_progress(True))
        return [(cell, suite) for suite, cells in plan.suites for cell in cells], environment(plugin_modules())
    process = subprocess.run([side.python, "-c", _PLAN_THERE], input=json.dumps(side.options.to_json()),
                             capture_output=True, text=True, check=False)
    if process.returncode != 0 or not process.stdout.strip():
        lines = [line for line in process.stderr.strip().splitlines() if line.strip()]
        raise UsageError(f"--{side.label.lower()} {side.python}: not a Python with stratabench importable "
                         f"({lines[-1].strip() if lines else f'exit {process.returncode}'})")
    answer = json.loads(process.stdout.strip().splitlines()[-1])
    runner = _EnvironmentRunner(side)
    stack.callback(runner.close)
    cells = [CellSpec.from_json(cell) for cell in answer["cells"]]
    return [(cell, runner if cell.language != "python" else None) for cell in cells], answer["environment"]


def _identity(cell: CellSpec) -> tuple[str, str, str]:
    return cell.suite, cell.name, json.dumps(dict(cell.params), sort_keys=True, default=str)


def _common(planned: dict[str, list[tuple[CellSpec, ExternalRunner | None]]]) -> tuple[list[AbCell], list[str]]:
    """The cells both sides planned, and one line for each cell only one side planned."""
    a, b = ({_identity(cell): (cell, runner) for cell, runner in planned[label]} for label in SIDES)
    cells: list[AbCell] = []
    not_compared = [f"{key[0]} {key[1]}: only on side {label}" for label, mine, theirs in
                    (("A", a, b), ("B", b, a)) for key in mine if key not in theirs]
    for key, (cell, runner) in a.items():
        if key not in b:
            continue
        other, other_runner = b[key]
        if runner is not None and other_runner is not None:
            cells.append(AbCell({"A": cell, "B": other}, {"A": runner, "B": other_runner}))
        else:
            cells.append(AbCell({"A": cell, "B": other}))
    return cells, not_compared


def handle(args: argparse.Namespace) -> int:
    reporter = REPORTERS.get(args.format)()
    if args.min_time is None:
        args.min_time = ROUND_MIN_TIME_S
    given = parse_settings(args.settings)
    check_settings(given)
    for url in args.store or ():
        check_store_url(url)
    run_id = new_run_id()
    engine = engine_options(args)
    settings = visit_settings(engine.samples, given)
    base = RunOptions(suites=names(args.suites, "SUITE"), size=args.size, seed=args.seed, stores=tuple(args.store or ()),
                      codecs=names(args.codec, "--codec"), compressors=names(args.compressor, "--compressor"), mappers=names(args.mapper, "--mapper"),
                      settings=settings, run_id=run_id, engine=engine)
    if base.engine.count is not None:
        require_valgrind()
    # A count is exact: one round gives it (each further one would count the same instructions again).
    rounds, until_sure = (1, 0) if base.engine.count is not None else (args.rounds, args.until_sure)
    # CPU time by default: descheduled time (a busy neighbour's) is in wall time and not in CPU time. On this
    # project's shared 2-core machine at a load of 10, 10% more work on 16 cells gave per-round ratios of
    # 0.81-1.22 in wall time and 1.10-1.12 in CPU time (benchmarks/ab_targets.py).
    measured = metric(args.metric or ("instructions" if base.engine.count else "cpu_ns"))
    if args.metric is not None and args.metric not in METRICS:
        raise UsageError(f"--metric {args.metric!r} is not a metric; known: {', '.join(METRICS)}")
    # A cell measured outside a Python worker (Go, treestore's worker, parking's server) has no worker CPU time:
    # with the default metric it is judged on its wall time, and its row says so.
    args.fallback = metric(WALL_METRIC) if args.metric is None and not base.engine.count else None
    sides = [_side(label, text, base) for label, text in zip(SIDES, (args.a, args.b))]
    if not base.engine.isolate and any(side.python != sys.executable for side in sides):
        raise UsageError("--in-process measures in this interpreter: a side that is another Python environment "
                         "needs workers of its own; drop --in-process")
    order_seed = args.order_seed if args.order_seed is not None else int.from_bytes(os.urandom(4), "big")
    output = Path(args.output) if args.output else Path(f"results/{run_id}.jsonl")
    progress = make_progress(args.quiet)
    with recovered_scratch(run_id, "stratabench ab"), ExitStack() as stack:
        planned, environments = {}, {}
        for side in sides:
            planned[side.label], environments[side.label] = _plan_in(side, stack)
        cells, not_compared = _common(planned)
        if base.engine.count is not None:
            not_compared += [f"{cell.spec.suite} {cell.spec.name}: {uncountable(cell.spec)}" for cell in cells
                             if uncountable(cell.spec)]
            cells = [cell for cell in cells if not uncountable(cell.spec)]
        for line in not_compared:
            print(f"not compared: {line}", file=sys.stderr)
        if not cells:
            raise NoCellsError("the two sides have no cell in common; nothing to compare")
        header = header_record(run_id, dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                               environments["A"], base.to_json(), {})
        header["ab"] = {"order_seed": order_seed, "rounds": rounds, "until_sure": until_sure,
                        "sides": {side.label: {"description": side.description, "python": side.python,
                                               "environment": environments[side.label]} for side in sides}}
        writer = stack.enter_context(ResultsWriter(output, header, overwrite=args.overwrite))
        factories = [cell.factory.partition(":")[0] for cell in (c.spec for c in cells) if cell.factory]
        drivers = [module for side in sides for module in store_drivers(side.options)]
        measure = stack.enter_context(ForkedMeasure(dict.fromkeys([*factories, *drivers])))
        progress.start(len(cells) * 2 * rounds)
        # Every cell may be called changed at each look (the first judgement, then each --until-sure pair).
        level = family_level(len(cells), 1 + (until_sure + 1) // 2)
        run_until_sure(cells, sides, rounds, until_sure, order_seed, measure, writer, progress,
                       lambda cell: _inconclusive(cell, sides, measured, args.min_effect, level, args.fallback))
        progress.finish()
        writer.finish(dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), {})
    return _report(args, cells, not_compared, sides, measured, reporter, output, level)


def _judge(cell: AbCell, sides: list[Side], measured: Any, min_effect: float, level: float,
           fallback: Any) -> AbVerdict | None:
    a, b = (cell.result(side.label, side.options) for side in sides)
    return judge(a, b, measured, min_effect, level, fallback)


def _inconclusive(cell: AbCell, sides: list[Side], measured: Any, min_effect: float, level: float,
                  fallback: Any) -> bool:
    verdict = _judge(cell, sides, measured, min_effect, level, fallback)
    return verdict is not None and verdict.inconclusive


def _report(args: argparse.Namespace, cells: list[AbCell], not_compared: list[str], sides: list[Side],
            measured: Any, reporter: Any, output: Path, level: float) -> int:
    verdicts = []
    for cell in cells:
        failed = cell.failed
        verdict = _judge(cell, sides, measured, args.min_effect, level, args.fallback)
        if failed is not None:
            not_compared.append(f"{cell.spec.suite} {cell.spec.name}: {failed.status}: {failed.error}")
        elif verdict is None:
            not_compared.append(f"{cell.spec.suite} {cell.spec.name}: no {measured.name}"
                                f"{' or ' + args.fallback.name if args.fallback else ''} on both sides")
        else:
            verdicts.append(verdict)
    summary = ab_summary(verdicts, measured, args.min_effect, len(not_compared), level)
    notes = [summary, *(f"{side.label}: {side.description}" for side in sides),
             *(f"not compared: {line}" for line in not_compared), *(counts_notes() if args.count else ())]
    judged_on = measured.name + (f" ({args.fallback.name} where a cell has none)" if args.fallback else "")
    table = ab_table(verdicts, measured, f"ab {judged_on}: B/A, paired round by round", notes)
    sys.stdout.write(reporter.render([table]))
    print(summary, file=sys.stderr)
    print(f"results: {output}", file=sys.stderr)
    worse = [v for v in verdicts if args.fail_above is not None and v.worse and
             (v.ratio if measured.better == "lower" else 1 / v.ratio) > args.fail_above]
    for v in worse:
        print(f"regression: {v.suite} {v.cell}: {v.ratio:.3f}× (interval {v.low:.3f}–{v.high:.3f}; "
              f"limit {args.fail_above:g}×)", file=sys.stderr)
    if args.summary or os.environ.get(STEP_SUMMARY):
        moved = sum(1 for v in verdicts if v.verdict not in ("unchanged",))
        verdict_line = (f"{'gate failed' if worse else 'gate passed'} (--fail-above {args.fail_above:g}): "
                        if args.fail_above is not None else "") + f"{moved} of {len(verdicts)} cells not unchanged"
        write_summary(markdown_summary(f"stratabench ab: {sides[0].description} → {sides[1].description}",
                                       verdict_line, table, lambda row: row["verdict"] != "unchanged"),
                      args.summary)
    return 1 if worse else 0
