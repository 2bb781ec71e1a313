"""Measure the same statements with `stratabench timeit` and `pyperf timeit`, side by side.

Prints the median of each tool for each statement and their ratio
(stratabench / pyperf), which should lie within ±5%, and the engine's own
cost: the per-loop time of an empty statement and of an empty callable.

Run it with the project's environment:

    .venv/bin/python benchmarks/engine_vs_pyperf.py [--fast]

It is a benchmark, not a test: the machine is noisy, so it reports ratios
from one run instead of asserting them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pyperf

import stratabench
from stratabench.units import format_ns

STATEMENTS = [
    ("sorted(a)", "a = list(range(1000))[::-1]"),
    ("d.get('k')", "d = {'k': 1}"),
    ("dumps(o)", "from json import dumps; o = {'a': list(range(20)), 'b': 'text'}"),
]

STRATABENCH = [sys.executable, "-m", "stratabench.cli.main"]


def stratabench_summary(stmt: str, setup: str, samples: int | None = None) -> dict[str, float]:
    """The wall-time summary (``median``, ``min``... in ns per loop) of one ``stratabench timeit`` run.

    ``samples`` (its rounds) defaults to the tool's own default, so the run is what a user's is.
    """
    rounds = [] if samples is None else ["--samples", str(samples)]
    out = subprocess.run(
        [*STRATABENCH, "timeit", "--json", *rounds, "--setup", setup, stmt],
        capture_output=True, text=True, check=True,
    ).stdout
    summary: dict[str, float] = json.loads(out)["metrics"]["wall_ns"]["summary"]
    return summary


def stratabench_median(stmt: str, setup: str, samples: int) -> float:
    return float(stratabench_summary(stmt, setup, samples)["median"])


def pyperf_values(stmt: str, setup: str, fast: bool) -> list[float]:
    """The values (ns per loop) of one ``pyperf timeit`` run, every worker process's."""
    with tempfile.TemporaryDirectory() as tmp:
        output = Path(tmp) / "bench.json"
        command = [sys.executable, "-m", "pyperf", "timeit", "--quiet", "-o", str(output), "-s", setup, stmt]
        if fast:
            command.insert(4, "--fast")
        subprocess.run(command, capture_output=True, text=True, check=True)
        return [value * 1e9 for value in pyperf.Benchmark.load(str(output)).get_values()]


def pyperf_median(stmt: str, setup: str, fast: bool) -> float:
    return statistics.median(pyperf_values(stmt, setup, fast))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="pyperf --fast and fewer stratabench samples")
    args = parser.parse_args()
    samples = 10 if args.fast else 20

    print(f"{'statement':<14} {'stratabench':>12} {'pyperf':>12} {'ratio':>7}  verdict")
    worst = 0.0
    for stmt, setup in STATEMENTS:
        ours = stratabench_median(stmt, setup, samples)
        theirs = pyperf_median(stmt, setup, args.fast)
        ratio = ours / theirs
        worst = max(worst, abs(ratio - 1))
        verdict = "agree (within ±5%)" if abs(ratio - 1) <= 0.05 else "DIFFER by more than 5%"
        print(f"{stmt:<14} {format_ns(ours):>12} {format_ns(theirs):>12} {ratio:>7.3f}  {verdict}")

    empty_statement = stratabench_median("pass", "pass", samples)
    empty_callable = stratabench.measure(lambda: None, samples=samples).median("wall_ns")
    print()
    print(f"engine cost: empty statement {format_ns(empty_statement)} per loop; "
          f"empty callable (stratabench.measure) {format_ns(empty_callable)} per call")
    print(f"largest disagreement with pyperf: {worst:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
