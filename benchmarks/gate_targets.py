"""Measure the regression gate's targets (issue 9): false alarms and power, side by side.

**False alarms.** Two back-to-back runs of identical code, then
``stratabench compare A B --fail-above 1.10``: its exit status and the cells
it calls changed. Done ``--repeats`` times (default 3). Target: exit 0, at
most 1 cell in 300 called changed.

**Power.** A known slowdown injected into a few cells with the calibration
setting ``matrix.calibration_slowdown`` (each timed call of the chosen
operations made exactly ``1 + L`` times as costly, see
``stratabench.suites.matrix.suite._slowed``), compared against the last
identical run. Target: every injected cell called slower at 10% and above,
with a ratio interval that contains the true ratio ``1 + L``; the cells not
injected stay unchanged.

The runs are ordinary (unless ``--default-run`` takes the false-alarm pairs from the
default run, as the issue states the target) ``stratabench run matrix`` runs of a registered
dataset (default: comments, 500 records; two codecs, no compression; 16
cells) with the engine's default sampling, so the script measures whatever
sampling the engine has (fixed or adaptive) and keeps to minutes on a
loaded 2-core machine. Widen it with ``--codec``, ``--size``, ``--dataset``.

    .venv/bin/python benchmarks/gate_targets.py [--repeats 3] [--levels 0.1,0.2,0.5]

A benchmark, not a test: it prints figures from one run and asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stratabench.report.comparison import compare_results
from stratabench.results.format import load

STRATABENCH = [sys.executable, "-m", "stratabench.cli.main"]
GATE = "1.10"


def run(out: Path, args: argparse.Namespace, *extra: str, default: bool = False) -> float:
    """One ``stratabench run`` into ``out`` (the matrix runs, or the default run); returns its wall time in seconds."""
    if default:
        command = [*STRATABENCH, "run", "-q", "-o", str(out)]
    else:
        command = [*STRATABENCH, "run", "matrix", "--set", f"matrix.dataset={args.dataset}", "--size", str(args.size),
                   "--compressor", "none", "-q", "-o", str(out), *extra]
        for codec in args.codec:
            command += ["--codec", codec]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        sys.exit(f"run failed ({done.returncode}): {done.stderr.strip()}")
    return time.perf_counter() - started


def gate(before: Path, after: Path) -> int:
    """The exit status of ``compare --fail-above 1.10``, through the real CLI."""
    return subprocess.run([*STRATABENCH, "compare", str(before), str(after), "--fail-above", GATE],
                          capture_output=True, text=True, check=False).returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="false-alarm pairs (default 3)")
    parser.add_argument("--levels", default="0.1,0.2,0.5", help="injected slowdowns (default 0.1,0.2,0.5)")
    parser.add_argument("--operations", default="get_many,put", help="operations slowed (default get_many,put)")
    parser.add_argument("--dataset", default="comments", help="registered dataset (default comments)")
    parser.add_argument("--size", type=int, default=500, help="records (default 500)")
    parser.add_argument("--codec", action="append", default=None, help="codecs (default json, msgpack)")
    parser.add_argument("--keep", type=Path, help="keep the results files in this directory")
    parser.add_argument("--default-run", action="store_true",
                        help="take the false-alarm pairs from the default `stratabench run` (every default suite, "
                             "about 300 cells, minutes per run) instead of the matrix runs")
    args = parser.parse_args()
    args.codec = args.codec or ["json", "msgpack"]
    directory = args.keep or Path(tempfile.mkdtemp(prefix="gate-targets-"))
    directory.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start; results in {directory}")

    print(f"\nfalse alarms: two identical runs, compare --fail-above {GATE} (target: exit 0, <= 1 in 300 changed)")
    print(f"{'pair':>4}  {'cells':>5}  {'changed':>7}  {'exit':>4}  {'geomean':>7}  {'run A':>6}  {'run B':>6}")
    baseline = directory / "a1.jsonl"
    alarms = compared = 0
    for pair in range(1, args.repeats + 1):
        first, second = directory / f"a{pair}.jsonl", directory / f"b{pair}.jsonl"
        seconds_a, seconds_b = run(first, args, default=args.default_run), run(second, args, default=args.default_run)
        comparison = compare_results(load(first), load(second), "wall_ns")
        changed = [c for c in comparison.changes if c.changed]
        alarms, compared = alarms + len(changed), compared + len(comparison.changes)
        print(f"{pair:>4}  {len(comparison.changes):>5}  {len(changed):>7}  {gate(first, second):>4}  "
              f"{comparison.geomean or 0:>7.3f}  {seconds_a:>5.0f}s  {seconds_b:>5.0f}s")
        for change in changed:
            print(f"      called {change.verdict}: {change.cell} {change.test.ratio:.3f} "
                  f"({change.test.low:.3f}–{change.test.high:.3f}, p={change.test.p_value:.2g})")
        baseline = second
    print(f"total: {alarms} of {compared} cells called changed ({alarms / max(compared, 1) * 300:.1f} per 300)")

    operations = args.operations.split(",")
    if args.default_run:  # the power runs are matrix runs; their baseline must be one too
        baseline = directory / "power-baseline.jsonl"
        run(baseline, args)
    print(f"\npower: {', '.join(operations)} slowed by L, against {baseline.name} (target: every injected cell "
          "called slower at L >= 10%, interval holding 1+L)")
    print(f"{'L':>5}  {'true':>5}  {'injected':>8}  {'caught':>6}  {'holds':>5}  {'median ratio':>12}  "
          f"{'others changed':>14}  {'exit':>4}")
    for level in (float(text) for text in args.levels.split(",")):
        after = directory / f"slow{level:g}.jsonl"
        run(after, args, "--set", f"matrix.calibration_slowdown={level}",
            "--set", f"matrix.calibration_operations={args.operations}")
        comparison = compare_results(load(baseline), load(after), "wall_ns")
        injected = [c for c in comparison.changes if c.after.params.get("operation") in operations]
        others = [c for c in comparison.changes if c not in injected]
        caught = sum(c.verdict == "slower" for c in injected)
        holds = sum(c.test.low <= 1 + level <= c.test.high for c in injected)
        ratios = sorted(c.test.ratio for c in injected)
        middle = ratios[len(ratios) // 2] if ratios else float("nan")
        print(f"{level:>5.0%}  {1 + level:>5.2f}  {len(injected):>8}  {caught:>6}  {holds:>5}  {middle:>12.3f}  "
              f"{sum(c.changed for c in others):>14}  {gate(baseline, after):>4}")
        for change in injected:
            print(f"      {change.cell}: {change.test.ratio:.3f} ({change.test.low:.3f}–{change.test.high:.3f}, "
                  f"p={change.test.p_value:.2g}) {change.verdict}")
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
