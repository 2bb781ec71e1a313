"""The bulkload suite's Go rows: run the Go adapter and read its lines as cell results.

A run's Go cells are measured in rounds, as its Python cells are: each
round is a fresh ``stratabench-go`` process that measures every Go cell,
taken as a slice between two Python rounds (:class:`GoProcesses`,
:mod:`stratabench.engine.slices`), so a cell's processes span the run
instead of 18 s at its end. What one process gives all its samples alike
(its heap, the machine's speed in its few seconds) then varies between
rounds, so a cell's interval and ``compare``'s test see it. With one
process for six samples, two runs of identical code had 3 to 8 of 38 Go
cells 15-75% apart beyond their intervals.

The floor is nine processes of one 20 ms sample of every cell (the six
rounds' 30 ms samples of a Python cell shared among them: the suite's
``_default_benchtime``), not six of 30 ms: nine values drop the far one
at each end of a cell's interval (:mod:`stratabench.engine.sampling`),
where six take their whole range. Nine processes over six rounds take
rounds 0-8, not two a round (two processes after one round would be one
value: :func:`~stratabench.engine.slices.slice_rounds`). Where a process's
time goes (one process of the default run's 38 cells, ramping to its
benchtime, alternated three times under the lock, load 1.5-1.9): 2.56,
2.63 and 2.79 s at 20 ms, 1.24 and 1.32 s at ``1x`` (one timed operation
a cell, after an untimed one; a first rebuilt the embed program), of
which the checks of the last sample (a decode of what each of 16 encodes
wrote, a hash of each cell's records) took 0.4-0.65 s (with
``--checked`` for every cell: 2.04, 2.05 and 2.15 s; 0.79, 0.84 and 0.96
s): most of a process is per cell, so a process of shorter samples
costs nearly as much. ``run bulkload`` pairs under the lock, main (six
of 30 ms) against nine of 20 ms, checking every process, A B A B (load
1.4-1.9) then B A B A (load 1.2-1.8): Go cells flagged 29, 31, 32, 34 against 33, 19, 25, 25 (median
half-width ±9.3%, ±10.3%, ±8.8%, ±15.3% against ±11.5%, ±5.0%, ±6.6%,
±8.5%), the Go processes 17.9, 18.1, 18.7, 18.0 s against 23.5, 21.4,
22.3, 21.6 s, the runs 76.6, 74.3, 77.0, 72.7 s against 81.0, 75.6, 80.0,
75.3 s. In those eight runs the spread within a process (a cell's value
over its process's common speed, sd of the log) was 7.7-14.6%, larger
than the spread of the processes' speeds (4.3-8.0% in seven, 16.9% in
one whose two small processes past the floor read 1.58x and 1.36x): the
machine's noise in each sample, which more values narrow, whether they
are processes or samples.

What made the nine processes cheap: a cell's data is checked by the
first process only (``--checked``; :class:`GoProcesses`), so a later
process only measures. The check of a process's last sample (a decode of
what each encode wrote, a hash of every cell's records) took most of
what a process spends beyond its samples: nine processes of 20 ms with
it took 2.03-2.68 s each after the first (the runs above), without it
1.56-1.73 s. ``run bulkload`` pairs under the lock, main against nine
processes of 20 ms each checked once, A B A B (load 1.1-1.8): Go cells
flagged 20 and 21 of 38 against 7 and 6 (median half-width ±5.3%, ±5.3%
against ±3.2%, ±3.5%), the Go processes 17.9 and 17.0 s against 16.1
and 16.3 s (the first 3.4-3.6 s against 2.5 s), the runs 69.6 and 68.5 s
against 67.2 and 67.7 s; the Go medians moved 0.998x and 0.994x
(geometric mean; 0.90-1.16 a cell), and each side's second run had its
median inside the first's interval for 34 (main) and 30 (here) of 38
cells. B A B A after it (load 1.4-1.9): 26 and 25 flagged against 22
and 11 (±6.9%, ±6.5% against ±5.4%, ±3.5%), Go processes 17.9 and 17.6
s against 18.3 and 16.0 s, second run inside the first's interval 36
(main) and 18 (here) of 38: a run whose every cell moved (0.978x and
1.042x of main's, geometric mean) leaves intervals of ±3.5% more often
than intervals of ±6.5%. Which of the two changes narrows the cells:
here with ``go.processes=6`` (six of 30 ms, each cell checked once)
against the default, C B C B under the lock (load 1.1-1.6): 23 and 26
flagged against 7 and 12 (±6.4%, ±11.7% against ±3.0%, ±3.0%), the Go
processes 15.5 and 15.0 s against 16.4 and 16.3 s, the runs 67.3 and
67.7 s against 65.8 and 65.4 s, second run inside the first's interval
35 (six) and 27 (nine) of 38: the nine values narrow, the check's
saving pays for them.

Past the floor of processes, a cell whose interval misses the target
takes more, as a Python cell takes rounds (:class:`GoProcesses` is a
:class:`~stratabench.engine.slices.MoreSlices`; the engine's stopping rule
and an allowance of the slices' own decide, engine/slices.py says how):
up to nine processes, or twelve when nine could not leave out its far
values, each later process (``run_more``) of only the cells still going,
at the first process's loop counts, one after each later Python round. A
process of 15 cells took 0.95-1.07 s against 2.5 s for 38. Measured
against main (45d8b78) under the lock: default runs, A then B (load
1.2-1.6) and B then A (load 1.2-1.7), flagged 19 and 13 of 38 Go cells
on main, 7 and 11 here (15 and 16 cells took nine processes, 2 and 0
twelve; 21 of the 31 met the target), the Go processes 16.2 and 15.7 s
against 19.2 and 19.0 s, the runs 192 and 189 s against 195 and 195 s,
the Go medians 1.015x and 0.999x (geometric mean); ``run
bulkload`` alone, B A then A B (load 1.3-2.3), where the slices' 10% is
1.6 s and seven cells took nine processes: 29 and 19 flagged on main, 27
and 15 here, Go processes 17.0 and 15.8 s against 17.7 and 16.3 s, Go
medians 0.966x and 0.969x. What stays flagged is spread between processes,
not one far value: each process has a speed common to its cells (the
geometric mean of its cells' ratios to their medians moved 0.96-1.08
between processes of one run, and a process of a few cells at the end of
a run 0.84-1.24), which nine values narrow but seldom to ±5%. A process of
14 cells against one of all 38, alternated six times each under the lock
(load 1.4), measured those cells 0.976x (geometric mean; 0.885-1.031 a
cell): the smaller process's setup keeps less of the other cells' assets
live, a difference within the processes' own spread.

A process may take several samples of each cell (``go.count``): the
program takes them in passes over the cells (go/internal/format/passes.go),
so one cell's samples are a second or more apart, and the round's value is
their median. The default stays one sample a process (``GO_SAMPLES`` in
suite.py), because the samples were not spiky but broadly noisy, and more
of them cost more than the process they share: the Go cells alone, six
processes back to back under the lock, at load 1.5-3.7 (other agents' work
running niced), flagged 38 of 38 cells in every setting, with the
intervals' median half-width ±48% and ±55% for one 30 ms sample a process
(26.9 and 23.5 s), ±39% and ±38% (39.0 and 30.4 s) for three of 10 ms,
±34% (35.4 s) for two of 15 ms. In one process of three 10 ms samples a
cell's samples spread max/min 1.45 at the median cell (2.0 at p90), as much
as its processes' medians (1.51), while the processes' speeds (geometric
mean over the cells) stayed within 0.91-1.08: the noise is in each 10 ms
window (embed, a pointer copy without allocation, moved 0.90-1.56), not in
the process. A sample costs testing.Benchmark's two collections (about 4 ms
each) and its first run besides its benchtime, so three short samples cost
a process 5.0 s where one of 30 ms cost 3.3 s. In whole ``run bulkload``
runs, A B A B under the lock at load 1.7-2.5, the default (six sliced
processes of one sample) flagged 37 and 36 of 38 Go cells (median
half-width ±20% and ±18%) with its processes taking 20.3 and 20.8 s, and
``go.count=3`` (10 ms samples) 38 and 38 (±22%, ±25%) in 30.1 and 33.5 s.

Only the first process ramps up: testing.Benchmark's ramp to the benchtime
cost each sample about its own length again, so the later processes take
the first one's loop count per cell (``--loops``) and only measure, and
every process measures only the cells asked for (``--cells``: the default
run's 38, not the 50 of its formats x variants). Six processes then took
21.3 and 17.0 s against 25.8 and 28.3 s (alternated under the lock, load
1.3-1.8). Nine processes, the fewest whose median interval drops a value
at either end, took 37.8 and 31.9 s against six ramped processes' 31.2 and
36.2 s (under the lock, load 2.2-4.3), at the same samples' length.

What the Go cells measure: an operation's wall time, its collections
included, on one P. The program runs its samples at GOMAXPROCS=1
(``--gomaxprocs``, which the embed program follows, and each line
records), so the collector's mark work runs on the operation's core and
inside its time, as a Python cell's work is its one thread's; with two
Ps it ran on the second core beside the decode, for nothing when that
core was free and waiting when another process held it. Every sample
starts from a collected heap: testing.Benchmark runs runtime.GC before
each timed run (gctrace shows the forced cycles), as ``go test -bench``
does; the collections the operation's garbage causes stay in the timer
(the collector is never switched off). A setting was judged by processes
of the default run's cells (36: embed's are timed in its own program,
fixed loops, one sample each) alternated A B A B under the lock: at load
2.9-3.9, 12 processes a side, the per-cell spread across processes
(standard deviation of the log) was 13% at GOMAXPROCS=2, 16% at 1, 16%
at GOGC=400 and 17% with 60 ms samples, six-process groups flagging
32-36 of 36 in every setting; at load 2.4 (at its end), 18 a side, 15%
at 2 and 8% at 1 (groups flagging 32, 36, 36 against 23, 28, 33). An
earlier test (8 cells, 8 processes each, load 1.4-1.6) saw one P no
narrower either (per-process sd 9-29% against 10-19%). One P lowers the
medians (0.96x and 0.92x; GOGC=400, with fewer collections, 0.88x).
Whole ``run bulkload`` runs, main (two Ps) against one P, A B A B then B
A B A under the lock at load 1.3-2.2: Go cells flagged 38, 38, 38, 37
against 34, 37, 32, 34 (median half-width ±22%, ±21%, ±18%, ±18% against
±26%, ±16%, ±14%, ±19%), the processes taking 20.5, 20.8, 18.8, 18.7 s
against 18.3, 19.6, 17.6, 17.9 s: fewer flags in each pair, not the cut
below ±5% (issue 21 wants under a tenth of cells flagged). The spread
that stays is the machine's: with each process's common speed (the
geometric mean over its cells) taken out, a cell's processes in those
eight runs still spread ±12-21% (median half-range), either way.

Why the Go cells have no machine probe (the Python cells'
:mod:`stratabench.engine.probe`): it does not see what slows them. The
program was run with a Go probe logged around every sample (a fixed
xorshift loop of about 0.25 ms, no memory traffic, timed on the thread's
CPU clock with the timer stopped right before and right after the timed
loop, and on the wall clock), no retake: the default run's 38 cells, their
loop counts fixed, 10, 10 and 8 processes of two samples, under the lock
at load 1.8-3.5. Of the samples above 1.2x their cell's median (18, 26 and
32 of 760, 760 and 608) the probe read above 1.2x its moving median (the
Python rule's) around 0, 2 and 2, against 3.1%, 2.0% and 3.9% of the
samples within 1.05x (false alarms); read on the wall clock, around 4, 7
and 4, against 6.3%, 9.8% and 5.0%. A sample's ratio to its cell's median
and the probe's to its median correlate at 0.06, 0.06 and 0.12 (log). The
slow samples are not the vCPU running slower, as the Python cells' are: in
the third run, where each sample's process CPU time was read too, a slow
sample's CPU time was its wall time (median ratio 1.00) and 1.2-2.0x its
cell's median CPU time (median 1.31x) with as many collections (30 of
32), while the loop timed just before and after it ran at its usual
speed; over the three runs, 44 of the 76 slow samples were encodes. A pointer chase over 128 MiB (memory
latency) as the probe saw 4 of 62 (and its traffic slowed the samples).
Retaking on that probe would set aside about 3% of normal samples for
about one slow sample in ten, so the Go side takes every first sample.
Two samples a process would narrow the cells (six-process groups of
those runs, one sample a process against the median of two: 18, 17, 18
flagged against 16, 13, 16; 30, 31, 27 against 19, 23, 23; 27, 29
against 24, 22) but cost each process 2.2 s (alternated under the lock,
load 1.4-1.8: 2.77, 2.73, 2.83 s for one, 4.89, 5.03, 5.02 s for two),
13 s a default run, which is already past its three minutes; a process's
fixed cost (start, dataset, assets) is about 0.2 s of it, the rest its
samples (a 40 ms timed loop spans 60 ms with testing.Benchmark's
collection and first run).

The program runs with ``GODEBUG=madvdontneed=0``
(:data:`stratabench.adapters.golang.BULKLOAD_GODEBUG`, set where the
program starts): the heap the scavenger returns between samples is
released with MADV_FREE, so it stays mapped unless the machine runs short
of memory, where MADV_DONTNEED (the default) unmapped it and the next
sample faulted it back in, page by page, zeroed by the kernel and, on a VM
that reports freed memory to its host (virtio-balloon free page
reporting), by the host too: the heap of a process that has run a while,
not a fresh one's, as a long-running server keeps its heap. The collector
and a sample's own allocations stay as they were. Read per sample (minor
faults of the timed run, getrusage), default against MADV_FREE, the
default run's 36 cells (embed's run in their own program), fixed loops, 18
processes a side alternated under the lock (A B, then B A; load 1.2-2.2):
a sample's faults were 996 and 908 at the median against 0 and 0; the
processes took 2.74 and 2.76 s against 2.57 and 2.63 s; the cells' medians
went 0.945x and 0.953x (geometric mean; 0.83-1.01 a cell); the per-cell
spread across processes (sd of the log) 4.4% and 5.5% against 3.9% and
4.4%; six-process groups flagged 20, 16, 24 and 19, 20, 21 of 36 (median
half-width ±5.5%, ±5.4%) against 16, 11, 18 and 16, 18, 18 (±4.3%, ±4.7%).
The faults are not what makes a sample slow, though: the samples above
1.2x their cell's median (13 and 8 by default, 9 and 11 with MADV_FREE)
faulted about as often as their cell's others (72 and 300 more at the
median, of about 2,000), CPU time equal to wall time either way. Whole
``run bulkload -q`` runs, main against MADV_FREE, A B then B A under the
lock at load 1.4-2.6: Go cells flagged 31 and 28 of 38 against 26 and 24
(median half-width ±8.8%, ±8.4% against ±7.1%, ±6.3%), the Go medians
0.940x and 0.928x, the processes 17.5 s against 16.2 s (the other pair's
13.6 s against 12.3 s over processes 2-6: its first rebuilt the embed
program's cache for the changed sources).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from stratabench.datasets import bulkload as dataset
from stratabench.datasets.verify import Integrity
from stratabench.engine.operation import CellSpec
from stratabench.errors import StratabenchError, UnavailableError
from stratabench.metrics import METRICS
from stratabench.results.records import CellResult, MetricResult
from stratabench.results.stats import instability
from stratabench.suites.bulkload.sizes import compressed_sizes

__all__ = ["GoProcesses"]


class GoProcesses:
    """A run's Go cells, one ``stratabench-go`` process a slice (a :class:`~stratabench.engine.slices.SliceSession`).

    Each of the ``processes`` slices (the floor) starts the program once
    for every Go cell, and each slice past it (:meth:`run_more`) for the
    cells the engine still wants; it takes ``count`` samples of each, in
    passes over the cells (one cell's samples seconds apart), and a cell's
    result of the slice holds them, so its value for the round the slice
    followed is their median. The first process to measure a cell ramps up
    to ``benchtime``; the later ones take its loop count (``--loops``) and
    only measure. A cell's data is checked (decoded, hashed, compared with
    the dataset's) by the first process whose line of it hashed right; the
    later ones skip the check (``--checked``), and their results carry no
    integrity of their own: the merged cell keeps its first slice's.

    The program is built when the session opens, when missing or built from
    other sources; the embed asset's build comes from the build cache when
    it holds one for these sources, Go, size and seed (its recorded build
    costs reported, with ``build_cached``). ``rebuild`` builds both anew.
    Without Go (no toolchain and no binary) the session does not open: the
    cells are unavailable, with the reason.
    """

    def __init__(self, cells: Sequence[CellSpec], workdir: Path, *, size: int, seed: int, count: int,
                 processes: int, benchtime: str, rebuild: bool = False) -> None:
        from stratabench.adapters import golang

        ok, reason = golang.go_available()
        if not ok and not golang.binary_path().exists():
            raise UnavailableError(f"Go rows need Go: {reason}")
        try:
            golang.ensure_built(("stratabench-go",), rebuild=rebuild)
            go_info = golang.info()
        except StratabenchError as error:
            raise error.with_context("Go rows") from None
        self.cells, self.workdir, self.size, self.seed = cells, workdir, size, seed
        self.samples, self.processes, self.benchtime = count, processes, benchtime
        self.want = dataset.cached_hash(size, seed)
        # The Ps the samples ran on come with each line (``gomaxprocs``, the program's --gomaxprocs), not the info's.
        self.go_notes = {"go_version": go_info.get("go_version")}
        self.embed_cache = golang.embed_cache_dir(size, seed)
        if rebuild:
            shutil.rmtree(self.embed_cache, ignore_errors=True)
        #: Each cell's iterations per sample (``format/variant``), from the first process that measured it.
        self.loops: dict[str, int] = {}
        #: The cells (``format/variant``) a process checked, their data hashing to the dataset's: a later process
        #: skips their check (the module docstring says what it costs).
        self.checked: set[str] = set()
        #: Each process's wall time, seconds: the Go cells' share of the run.
        self.process_s: list[float] = []

    @property
    def count(self) -> int:
        return self.processes

    def run(self, index: int) -> Iterator[CellResult]:
        """One process of every cell: each one's result with this process's samples; a failed process raises its
        reason."""
        return self._process(self.cells)

    def run_more(self, index: int, cells: Sequence[CellSpec]) -> Iterator[CellResult]:
        """One process past the floor, of ``cells`` only (those whose interval misses the target and were granted
        more: :mod:`stratabench.engine.slices`), at the first process's loop counts."""
        return self._process(cells)

    def _process(self, cells: Sequence[CellSpec]) -> Iterator[CellResult]:
        from stratabench.adapters import golang

        by_name = {cell.name: cell for cell in cells}
        # Only the cells asked for, not every variant of every format (the default run's 38 of 50).
        wanted = [f"{c.params['format']}/{c.params['variant']}" for c in cells]
        started = time.perf_counter()
        try:
            for line in golang.run_bulkload(
                seed=self.seed, size=self.size, workdir=self.workdir,
                formats=list(dict.fromkeys(c.params["format"] for c in cells)),
                variants=list(dict.fromkeys(c.params["variant"] for c in cells)),
                benchtime=self.benchtime, count=self.samples, embed_cache=self.embed_cache, cells=wanted,
                loops={cell: self.loops[cell] for cell in wanted if cell in self.loops},
                checked=[cell for cell in wanted if cell in self.checked],
            ):
                cell = f"{line['format']}/{line['variant']}"
                if line.get("loops") and not line.get("error"):
                    self.loops.setdefault(cell, int(line["loops"]))
                if line.get("hash") == self.want and not line.get("error"):
                    self.checked.add(cell)
                if f"go {cell}" in by_name:
                    yield _go_result(by_name[f"go {cell}"], line, self.want, self.go_notes)
        except golang.GoRunError as error:
            raise error.with_context("Go adapter") from None
        finally:
            self.process_s.append(round(time.perf_counter() - started, 3))

    def notes(self, cell: CellSpec, parts: Sequence[CellResult]) -> dict[str, Any]:
        return {**parts[0].notes, "samples_per_process": self.samples, "process_s": list(self.process_s)}

    def close(self) -> None:
        pass  # each process ends with its slice


def _go_result(spec: CellSpec, line: dict[str, Any], want: str, notes: dict[str, Any]) -> CellResult:
    """A Go cell's adapter line (one process) as a cell result checked against the Python-side hash."""
    metrics = {name: MetricResult.of([float(v) for v in values])
               for name, values in (line.get("samples") or {}).items() if values}
    if line.get("size_bytes") is not None:
        metrics["size_bytes"] = MetricResult.of([float(line["size_bytes"])])
    extra = dict(line.get("extra") or {})
    asset = extra.pop("asset", None)
    if isinstance(asset, str) and Path(asset).is_file():
        for name, value in compressed_sizes(Path(asset).read_bytes()).items():
            metrics[name] = MetricResult.of([value])
    for name, value in extra.items():
        if name in METRICS and isinstance(value, (int, float)):
            metrics[name] = MetricResult.of([float(value)])
    integrity = Integrity(want, line["hash"], None if line["hash"] == want else
                          f"Go decoded data hashing to {line['hash']}, not {want}") if line.get("hash") else None
    error = line.get("error")
    if error is None and integrity is not None and not integrity.ok:
        error = f"integrity: {integrity.detail}"
    return CellResult(
        suite=spec.suite, cell=spec.name, params=dict(spec.params), language="go",
        status="failed" if error else "ok", error=error, loops=line.get("loops"),
        metrics=metrics, integrity=integrity,
        notes={**notes, **{k: v for k, v in extra.items() if k not in METRICS}},
        # A fixed count of samples: no target to miss, but the spread (of the rounds, with rounds) still tells.
        flags=tuple(instability(metrics["wall_ns"].summary)) if "wall_ns" in metrics else (),
        judged="wall_ns" if "wall_ns" in metrics else None,  # timed in the Go process, per operation
    )
