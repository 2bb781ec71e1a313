"""Time the default run (`stratabench run`) from a cold and a warm build cache, and judge its intervals.

Prints, side by side:

- the wall time of `stratabench run` (every default suite, embedded
  backends) with an empty build cache (the embed asset is compiled) and
  with the cache it left (the target: at most 3 minutes warm), each with
  the load average before and after, since other work on the machine
  slows it;
- cells, ok cells, ok cells whose interval half-width is over 5% of the
  median and that are *not* flagged unstable (the target: 0), and flagged
  cells (the target: under 2% on a quiet machine), with the most common
  reasons;
- what one cell's fresh process costs: a new interpreter per cell
  (``--spawn``, as before the zygote) and a child forked from the zygote
  (the default), measured on an empty cell, outside the cell's own time.

Run it with the project's environment:

    .venv/bin/python benchmarks/default_run.py [--warm-only] [--keep DIR] [-- RUN OPTIONS...]

It is a benchmark, not a test: it reports what one run measured.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stratabench.build_cache import CACHE_DIR_ENV
from stratabench.engine.cell import run_cell
from stratabench.engine.zygote import Zygotes
from stratabench.options import EngineOptions, RunOptions
from stratabench.results.format import load
from stratabench.suites.timeit import TimeitSuite

#: The half-width (relative to the median) above which an ok cell must be flagged.
WIDE = 0.05


def load_text() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def timed_run(output: Path, cache: Path, extra: list[str]) -> tuple[float, str, str]:
    """Run `stratabench run` into ``output`` with the build cache ``cache``; wall seconds and the load around it."""
    before = load_text()
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "stratabench.cli.main", "run", "-q", "-o", str(output), *extra],
                   env={**os.environ, CACHE_DIR_ENV: str(cache)}, stdout=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started, before, load_text()


def judge(path: Path) -> list[str]:
    results = load(path).cells
    ok = [cell for cell in results if cell.ok]
    wide_unflagged = []
    for cell in ok:
        wall = cell.summary("wall_ns")
        if wall is not None and wall.relative_half_width > WIDE and not cell.flags:
            wide_unflagged.append(f"{cell.suite} {cell.cell} ({100 * wall.relative_half_width:.1f}%)")
    flagged = [cell for cell in results if cell.flags]
    reasons = collections.Counter(flag.split(":")[0].split(" ")[0] for cell in flagged for flag in cell.flags)
    lines = [
        f"  cells {len(results)}, ok {len(ok)}",
        f"  ok cells above {100 * WIDE:.0f}% half-width, unflagged: {len(wide_unflagged)}"
        + (f" ({', '.join(wide_unflagged[:5])})" if wide_unflagged else ""),
        f"  flagged unstable: {len(flagged)} ({100 * len(flagged) / max(len(results), 1):.1f}%)"
        + (f"; reasons: {', '.join(f'{name} {count}' for name, count in reasons.most_common())}" if flagged else ""),
    ]
    samples = [s.n for cell in ok if (s := cell.summary("wall_ns")) is not None]
    if samples:
        lines.append(f"  wall_ns samples per ok cell: median {statistics.median(samples):g}, "
                     f"min {min(samples)}, max {max(samples)}")
    return lines


def process_cost(cells: int = 12) -> list[str]:
    """Seconds one cell's process costs beyond the cell's own work, spawned and forked (median of ``cells``)."""
    lines = []
    engine = EngineOptions(samples=1, warmups=0, min_sample_ns=0, memory_samples=0)
    for label, fork in (("new interpreter per cell (--spawn, before)", False), ("forked from the zygote (after)", True)):
        options = RunOptions(suites=("timeit",), settings={"timeit.stmt": "pass", "timeit.setup": "pass"},
                             engine=dataclasses.replace(engine, fork=fork))
        (cell,) = TimeitSuite(options).cells()
        with Zygotes([cell.factory.partition(":")[0]]) as zygotes:
            run_cell(cell, options, zygotes)  # starts the zygote, outside the figures
            costs = []
            for _ in range(cells):
                started = time.perf_counter()
                result = run_cell(cell, options, zygotes)
                costs.append(time.perf_counter() - started - (result.duration_s or 0.0))
        lines.append(f"  {label}: median {1000 * statistics.median(costs):.0f} ms "
                     f"(min {1000 * min(costs):.0f}, max {1000 * max(costs):.0f}; {load_text()})")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm-only", action="store_true",
                        help="skip the cold run: use the cache at $STRATABENCH_CACHE_DIR (or the default) as it is")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the results files in DIR")
    parser.add_argument("run_options", nargs="*", help="options passed to stratabench run (after --)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="stratabench-default-run-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        print(f"stratabench run {' '.join(args.run_options) or '(every default suite, embedded backends)'}")
        if args.warm_only:
            from stratabench.build_cache import cache_root

            cache = cache_root()
        else:
            cache = work / "cache"
            seconds, before, after = timed_run(work / "cold.jsonl", cache, args.run_options)
            print(f"cold build cache: {seconds:6.1f} s  ({before} -> {after})")
            print("\n".join(judge(work / "cold.jsonl")))
        seconds, before, after = timed_run(work / "warm.jsonl", cache, args.run_options)
        verdict = "within" if seconds <= 180 else "over"
        print(f"warm build cache: {seconds:6.1f} s  ({before} -> {after}); {verdict} the 180 s target")
        print("\n".join(judge(work / "warm.jsonl")))
    print("per-cell process cost (an empty cell's round trip minus its own time):")
    print("\n".join(process_cost()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
