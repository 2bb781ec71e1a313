"""Issue 22's targets, side by side in one run: counting, ab's power, ab's false alarms and cost.

**Counts.** A probe cell (``benchmarks/ab_probe.py``: a loop of known work)
counted under callgrind three times: the spread of the three. Then 16 probe
cells of different sizes counted as they are and with 2% more work: how many
the instructions metric's tolerance calls changed (target 16 of 16), and how
many of 16 unchanged twins it calls changed (target 0); the time one count
took against timing the same cell.

**Power.** 16 probe cells whose side B does a known 5%, 10% or 20% more real
work, and 16 twins with none, measured by ``ab``'s own rounds (forked
workers, ABBA, this machine's clock): how many injected cells are called
slower (target: at 10% and above, 15 of 16 at least), how many twins are
called changed (target 0), and how many intervals contain the true ratio,
the 32 cells judged as ``ab`` judges 32 (the family level, with the looks
``--until-sure N`` adds; N more rounds at most for inconclusive cells)
(target 90%): the stated one (1 + X), and, after the counts, the counted one
(an operation's fixed cost, its call and loop, is not scaled by the added
work, so the true ratio is 1 + X times the share of the count that is).
Every figure is printed with the load average: the machine is shared.

**False alarms and cost.** ``stratabench run SUITES`` once, timed, then
``stratabench ab SUITES --b <this venv's python3>`` (this environment against
itself, each side with zygotes of its own) ``--repeats`` times: cells called
slower or faster of those compared (target: at most 1 in 300, exit 0 each
time) and the ab run's wall time against the run's (target 2.5x at most).

    .venv/bin/python benchmarks/ab_targets.py [--suites bulkload,cache,entities] [--repeats 3] [--skip counts]
        [--until-sure 6]

A benchmark, not a test: it prints figures from one run and asserts nothing.
"""

from __future__ import annotations

import io
import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
sys.path.insert(0, str(HERE))

from stratabench.cli.ab import ROUND_MIN_TIME_S, ROUND_SAMPLES, ROUND_WARMUPS  # noqa: E402
from stratabench.cli.progress import QuietProgress  # noqa: E402
from stratabench.engine.ab import AbCell, ForkedMeasure, Side, run_until_sure  # noqa: E402
from stratabench.engine.cell import run_cell  # noqa: E402
from stratabench.engine.operation import CellSpec  # noqa: E402
from stratabench.metrics import metric  # noqa: E402
from stratabench.options import EngineOptions, RunOptions  # noqa: E402
from stratabench.report.ab import family_level, judge  # noqa: E402
from stratabench.results.records import CellResult  # noqa: E402

FACTORY = "ab_probe:WorkProbe"
#: 16 cell sizes, in loop iterations: from about 0.1 ms to 3 ms an operation here.
SIZES = [2_000 * (i + 1) ** 1.5 for i in range(16)]


def load() -> str:
    """The machine's load average now (1, 5, 15 minutes), printed with each figure: the machine is shared."""
    return "load " + "/".join(f"{value:.1f}" for value in os.getloadavg())


def probe(name: str, work: float, extra: float = 0.0) -> CellSpec:
    return CellSpec("probe", name, {"work": int(work), "extra": extra}, "python", {}, FACTORY)


class Sink:
    def write(self, result: CellResult) -> None: ...


def counts() -> list[float]:
    """Print the counting targets; return each of the 16 cells' share of its count that the added work scales."""
    options = RunOptions(engine=EngineOptions(count="instructions"))
    started = time.perf_counter()
    three = [run_cell(probe("c", SIZES[4]), options).median("instructions") or 0.0 for _ in range(3)]
    per_count = (time.perf_counter() - started) / 3
    spread = max(three) / min(three) - 1
    timed_started = time.perf_counter()
    run_cell(probe("c", SIZES[4]), RunOptions())
    per_timing = time.perf_counter() - timed_started
    print(f"counts: three counts of one cell {[f'{c:,.1f}' for c in three]}: spread {spread:.5%} (target < 0.1%)")
    print(f"counts: one count took {per_count:.1f} s, timing the same cell {per_timing:.1f} s "
          f"({per_count / per_timing:.1f}x; {load()})")
    measured = metric("instructions")
    caught = unmoved = 0
    shares = []
    for index, work in enumerate(SIZES):
        base = run_cell(probe(f"w{index}", work), options).median("instructions") or 0.0
        more = run_cell(probe(f"w{index}", work, 0.02), options).median("instructions") or 0.0
        twin = run_cell(probe(f"w{index}", work), options).median("instructions") or 0.0
        caught += measured.beyond_tolerance(base, more)
        unmoved += not measured.beyond_tolerance(base, twin)
        shares.append((more / base - 1) / 0.02)
        print(f"  cell {index:2}: {base:12,.0f} -> +2% work {more:12,.0f} ({more / base:.4f}x); twin {twin / base:.5f}x")
    print(f"counts: 2% added work caught in {caught} of 16 (target 16); unchanged twins called unchanged "
          f"{unmoved} of 16 (target 16); {load()}")
    print(f"counts: the added work's share of each cell's instructions {min(shares):.4f}-{max(shares):.4f} (an "
          "operation's fixed cost is the rest): the true ratio of +X% work is 1 + X times that share")
    return shares


def power(levels: list[float], rounds: int, until_sure: int, shares: list[float] | None) -> None:
    """Print the power targets; an interval is judged against the stated ratio and, given the counted
    ``shares`` of work that the added work scales, against the counted one. The 32 cells are judged as ``ab``
    judges a run of 32 cells (the family level of 32 cells and the looks ``--until-sure`` adds), the extra
    rounds going to the cells inconclusive on CPU time."""
    # ab's own sampling of a visit (its defaults), so the figures are those of `stratabench ab`.
    options = RunOptions(engine=EngineOptions(samples=ROUND_SAMPLES, warmups=ROUND_WARMUPS,
                                              min_sample_ns=int(ROUND_MIN_TIME_S * 1e9), memory_samples=0))
    sides = [Side("A", "as is", options, sys.executable), Side("B", "more work", options, sys.executable)]
    confidence = family_level(32, 1 + (until_sure + 1) // 2)
    print(f"power: each of 32 cells judged at {confidence:.4%} (1 - 5% / (32 cells x looks)), {rounds} rounds"
          f" + up to {until_sure} for inconclusive cells")
    with ForkedMeasure(["ab_probe"]) as measure:
        for level in levels:
            injected = [AbCell({"A": probe(f"i{n}", w), "B": probe(f"i{n}", w, level)}) for n, w in enumerate(SIZES)]
            twins = [AbCell({"A": probe(f"t{n}", w), "B": probe(f"t{n}", w)}) for n, w in enumerate(SIZES)]
            started = time.perf_counter()

            def unsure(cell: AbCell) -> bool:
                judged = judge(cell.result("A", options), cell.result("B", options), metric("cpu_ns"), 0.05,
                               confidence)
                return judged is not None and judged.inconclusive

            run_until_sure(injected + twins, sides, rounds, until_sure, int(level * 1000), measure, Sink(),
                           QuietProgress(io.StringIO()), unsure)
            seconds = time.perf_counter() - started
            for name in ("wall_ns", "cpu_ns"):
                verdicts = [judge(c.result("A", options), c.result("B", options), metric(name), 0.05, confidence)
                            for c in injected + twins]
                hits = [v for v in verdicts[:16] if v is not None and v.verdict == "slower"]
                covered = [v for v in verdicts[:16] if v is not None and v.low <= 1 + level <= v.high]
                truths = [1 + level * share for share in shares] if shares else []
                counted = [v for v, truth in zip(verdicts[:16], truths) if v is not None and v.low <= truth <= v.high]
                false = [v for v in verdicts[16:] if v is not None and v.verdict not in ("unchanged", "inconclusive")]
                twins_covered = sum(1 for v in verdicts[16:] if v is not None and v.low <= 1 <= v.high)
                inconclusive = sum(1 for v in verdicts if v is not None and v.inconclusive)
                pairs = [v.pairs for v in verdicts if v is not None]
                print(f"power {level:.0%} ({name}): injected called slower {len(hits)} of 16 (target >= 15 at 10% "
                      f"and above); intervals holding {1 + level:.2f} {len(covered)} of 16"
                      + (f", the counted true ratio ({min(truths):.4f}-{max(truths):.4f}) {len(counted)} of 16"
                         if truths else "") + f" (target >= 90%); twins "
                      f"called changed {len(false)} of 16 (target 0), their intervals holding 1 {twins_covered} of 16; "
                      f"inconclusive {inconclusive} of 32; {min(pairs)}-{max(pairs)} pairs (mean {sum(pairs) / len(pairs):.1f}), "
                      f"{seconds:.0f} s; {load()}")
                print("  ratios:", " ".join(f"{v.ratio:.3f}" for v in verdicts[:16] if v is not None))
                print("  intervals:", " ".join(f"{v.low:.3f}-{v.high:.3f}/{v.pairs}" for v in verdicts if v is not None))


def false_alarms(suites: list[str], repeats: int, extra: list[str]) -> None:
    python = next(str(p) for p in (Path(sys.executable).with_name(n) for n in ("python3", "python3.11"))
                  if p.exists() and str(p) != sys.executable)
    cli = [sys.executable, "-m", "stratabench"]
    started = time.perf_counter()
    subprocess.run([*cli, "run", *suites, "-q", "-o", "/tmp/ab-targets-run.jsonl", "--overwrite", *extra],
                   capture_output=True, check=False)
    run_s = time.perf_counter() - started
    print(f"cost: one run of {' '.join(suites) or 'the default suites'}: {run_s:.0f} s; {load()}")
    for repeat in range(repeats):
        started = time.perf_counter()
        done = subprocess.run([*cli, "ab", *suites, "--b", python, "-q", "-o", f"/tmp/ab-targets-{repeat}.jsonl",
                               "--overwrite", *extra], capture_output=True, text=True, check=False)
        ab_s = time.perf_counter() - started
        summary = next((line for line in done.stderr.splitlines() if "cells compared" in line), done.stderr[-300:])
        print(f"false alarms, ab {repeat + 1}: exit {done.returncode}; {summary}")
        for line in done.stdout.splitlines():
            if line.rstrip().endswith((" slower", " faster")):
                print(f"  called: {line.strip()}")
        print(f"cost, ab {repeat + 1}: {ab_s:.0f} s, {ab_s / run_s:.2f}x one run (target 2.5x); {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suites", default="", help="comma list for the false-alarm runs (default: the default suites)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--until-sure", type=int, default=0, help="up to N more rounds for inconclusive cells")
    parser.add_argument("--levels", default="0.05,0.10,0.20")
    parser.add_argument("--skip", action="append", default=[], choices=["counts", "power", "false-alarms"])
    parser.add_argument("extra", nargs="*", help="more options for the run and ab (after --)")
    args = parser.parse_args()
    shares = counts() if "counts" not in args.skip else None
    if "power" not in args.skip:
        power([float(level) for level in args.levels.split(",")], args.rounds, args.until_sure, shares)
    if "false-alarms" not in args.skip:
        false_alarms([s for s in args.suites.split(",") if s], args.repeats, args.extra)


if __name__ == "__main__":
    main()
