"""``stratabench timeit STMT``: time a Python statement with stratabench's engine."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from stratabench.cli.arguments import add_engine_arguments, engine_options
from stratabench.engine.counting import require_valgrind
from stratabench.engine.cell import run_cell
from stratabench.engine.rounds import run_rounds
from stratabench.engine.statement import compile_statement, join_lines
from stratabench.options import RunOptions
from stratabench.results.stats import level_label
from stratabench.suites.timeit import TimeitSuite
from stratabench.units import format_ns

__all__ = ["DEFAULT_ROUNDS", "add_parser"]

#: Rounds (one sample each, in a fresh worker) of a `stratabench timeit` run unless --samples says otherwise.
DEFAULT_ROUNDS = 20


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "timeit", help="time a Python statement with the same engine as every suite",
        description="Time a Python statement as timeit and pyperf do (the statement is inlined in a "
        "calibrated loop), one sample in each of several fresh worker processes (rounds, as pyperf spreads its "
        "values over processes: each process's memory layout moves a small loop by up to 15%), and print the "
        "median per loop with the confidence interval its rounds reach (95% from 6; fewer print their lower "
        "level), then the best of the rounds, the figure python -m timeit prints (its best of 5 repeats), and the "
        "worst. A statement or setup that fails is reported with its line.",
    )
    parser.add_argument("stmt", nargs="*", help="the statement to time; several are joined as lines, as "
                        "python -m timeit joins them (default: pass)")
    parser.add_argument("-s", "--setup", action="append", default=[],
                        help="run before each timed loop, untimed; repeat it for several lines (default: pass)")
    parser.add_argument("--json", action="store_true", help="print the result record as JSON")
    # 20 rounds, not 10: `pass` runs at one of a few speeds (4.4 to 6.0 ns) that change every fraction of a second
    # with the machine's other work, and a median of 10 rounds is one draw of which speeds 10 moments caught. Under
    # the lock, 10 alternations of 10 rounds, 20 rounds and pyperf --fast (load 1.2-3.1): the run-to-run spread
    # (sd / median) 4.1% with 10 rounds, 1.0% with 20, 7.4% pyperf's; 3.1, 5.7 and 6.0 s a run.
    add_engine_arguments(parser, samples=DEFAULT_ROUNDS)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from stratabench.results.format import cell_to_json

    stmt, setup = join_lines(args.stmt), join_lines(args.setup)
    compile_statement(stmt, setup)  # a syntax error is refused here, before a worker starts
    if args.count is not None:
        require_valgrind()
    options = RunOptions(suites=("timeit",), settings={"timeit.stmt": stmt, "timeit.setup": setup},
                         engine=engine_options(args))
    (cell,) = TimeitSuite(options).cells()
    if args.count is not None:  # a count is exact: one callgrind run, no rounds
        result = run_cell(cell, options)
    else:
        (result,) = run_rounds([cell], options.engine, lambda spec, plan: run_cell(spec, options, plan=plan),
                               seed=0, finished=lambda result: None, reference=lambda: None)
    if args.json:
        print(json.dumps(cell_to_json(result), indent=2))
        return 0 if result.ok else 1
    if not result.ok:
        from stratabench.errors import StratabenchError

        raise StratabenchError(result.error or result.status)
    instructions, cycles = result.median("instructions"), result.median("est_cycles")
    if instructions is not None:
        print(f"{cell.name}: {instructions:,.1f} instructions per loop, {cycles or 0:,.1f} estimated cycles "
              f"(callgrind: {2 * (result.loops or 0):,} loops minus {result.loops or 0:,})")
        return 0
    wall = result.summary("wall_ns")
    assert wall is not None
    print(
        f"{cell.name}: {format_ns(wall.median)} per loop "
        f"({level_label(wall.ci_level)} CI {format_ns(wall.ci_low)} .. {format_ns(wall.ci_high)}; "
        f"{wall.n} rounds of {result.loops:,} loops; best of {wall.n} {format_ns(wall.min)}, worst {format_ns(wall.max)})"
    )
    for flag in result.flags:
        print(f"warning: unstable: {flag}", file=sys.stderr)
    return 0
