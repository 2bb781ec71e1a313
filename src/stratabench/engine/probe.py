"""The machine probe: a short fixed loop timed around each sample, and the retake of a sample it says the machine
slowed.

Why
---
On a shared machine the vCPU runs 1.2–2× slower for a fraction of a second
to seconds (the host's contention: the thread stays on the CPU, its CPU time
grows with its wall time, and nothing inside the guest shows it). A round's
value is one sample of about 10 ms, so one such window flags a cell: with six
rounds a cell's interval is their whole range. A fixed pure-Python loop of
about 0.25 ms (:func:`reference_loop`) timed just before and just after the
sample sees most of those windows. Measured in the real worker (forked per
visit, warm-up, 10 ms samples of 80 cache and entities cells, 400 visits,
under the lock, load 1.3–2.8): of the samples above 1.2× their cell's
median, 89% had a probe above 1.2× the probes' median, against 6.6% of the
samples within 1.05× (false alarms). The windows last tens of milliseconds:
a second sample 10 ms after a slow one was still slow in 21 of 35 visits,
60 ms after in 10 and 220 ms after in 3 (the base rate); but one taken right
after a probe that read normal again was slow in 2 of 33.

What
----
:func:`take_sample` takes a sample between two probes. When the slower of
them reads above :data:`RETAKE_ABOVE` times the run's probe median, the
sample is set aside (kept in the results file, with its probe figure), the
probe is run until it reads normal :data:`SETTLED_PROBES` times in a row (at
most :data:`SETTLE_CAP_NS`), and the sample is taken again, at most
:data:`MAX_RETAKES` times. The value kept is the last sample taken: a
measurement of the cell like any other, chosen by the probe's reading alone,
never by its own value (keeping the faster of two would bias every cell
low), and never divided by the probe. The run's probe median comes from the
parent (:class:`ProbeMedian`): the median of the last figures its workers
reported (a moving median: :class:`ProbeMedian` says why), and before the
first, the parent's own reading of the same probe.

Two probes around a sample miss a window that starts and ends inside it:
in six default runs of main (09371b4), 48% of the Python cells flagged in
the five quieter ones had their far rounds in samples whose probes read
normal (bulkload's 30 ms samples nearly all of theirs); each operation of
such a sample timed alone showed a burst of a few operations 1.3-1.9x among
normal ones. Timing a sample in chunks of about 5 ms with a probe between
two (outside the timers) was tried and measured worse, paired under the
lock (Python cells flagged, main then chunks): cache 23 and 37, 15 and 29;
entities 41 and 20, 30 and 49; bulkload 13 and 22 (and 34 and 16 with its
Go cells missing from the chunked run). More readings set more samples
aside (48 to 69 visits retaken in bulkload, 141 to 188 in entities), and a
retaken round is itself often far: 27-56% of the retaken rounds of cache
and entities lay beyond 5% of their cell's median, against 5-27% of the
rounds kept at the first sample (the window outlasts the wait, or the
retake, a later sample of the worker, errs high).

Its cost: two probes a sample (about 0.5 ms a visit, about 1.3 s of a
default run's 2,600 visits) and, for the visits retaken (7-15% of them),
the wait and a second sample.

Measured effect
---------------
Paired runs under the lock, main (A) then this (B), one pair per locked
command (``run cache -q`` and ``run entities -q``; Python cells flagged,
run time, visits retaken):

- entities, load 1.3-1.8: A 38 of 172 flagged (25 of 136 judged on CPU
  time), 85.3 s; B 13 (6 on CPU), 80.5 s; 100 of 1,401 visits retaken;
- entities, load 1.2-1.5 (a quiet machine): A 2 (0 on CPU), 70.2 s; B 5
  (4 on CPU), 74.8 s; 69 of 1,368 visits retaken;
- cache, load 1.6-2.7: A 52 of 104 (24 of 52 on CPU), 46.9 s; B 28 (9 on
  CPU), 49.5 s; 91 of 727 visits retaken;
- cache, load 1.2-1.4: A 19 (5 on CPU), 44.2 s; B 11 (1 on CPU), 45.7 s;
  51 of 716 visits retaken;
- cache, load 1.2-2.0: A 39 (6 on CPU), 47.6 s; B 15 (0 on CPU), 44.2 s;
  22 of 711 visits retaken;
- cache, load 3.4-4.2, with the run-wide median this replaced: A 35 (4 on
  CPU), 61.5 s; B 45 (14 on CPU), 54.9 s; its last round's probes all read
  2.4× while its samples did not (:class:`ProbeMedian`).

The cells judged on wall time in cache (SQLite) stay flagged either way
(14-33 of 52 in A, 10-31 in B): their spread is the file system's, which
no probe of the CPU sees. So the probe halves the flags of a noisy
machine (150 to 72 over the five pairs of this version, for 294.2 s and
294.7 s of runs) and does nothing for a quiet one, where its false alarms
(44 of the 72 samples set aside read within 1.05× of their cell's median)
cost a few seconds. The medians, paired cell by cell (B ÷ A, judged
metric): geomean 0.994 and 1.001 in entities (B lower in 103 and 83 of
172), 0.993, 0.996 and 0.980 in cache (0.979 with the run-wide median;
the cells judged on CPU time 0.984, 0.999 and 0.991, B lower in 38, 26
and 43 of 52); two runs of main differed by 0.982
(entities) and 0.983 (cache), so a shift of the medians, if any, is within
the run-to-run noise. A retaken
sample is a later one of the same worker: after normal probes, the second
to fourth samples of a visit were 0.5-1.5% slower at the median than its
first, so a retake errs high, not low. Of the samples set aside, 15 of
115 (entities) and 40 of 125 (cache) were followed by a kept retake still
above 1.2× the cell's median: a window that outlasts the wait and two
retakes stays in the value, as without the probe.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from stratabench.engine.clock import SYSTEM_CLOCK, Clock

__all__ = ["MAX_RETAKES", "PROBE_LOOPS", "PROBE_WINDOW", "RETAKE_ABOVE", "SETTLED_PROBES", "SETTLE_CAP_NS", "ProbeMedian", "Taken",
           "machine_probe", "reference_loop", "take_sample"]

#: Iterations of the probe's loop: about 0.25 ms here, short enough to run twice every visit.
PROBE_LOOPS = 5_000

#: A sample is retaken when the slower probe around it reads above this times the run's probe median: 89% of the
#: slow samples (> 1.2× their cell's median) and 6.6% of the normal ones read above it (1.1: 97% and 17.7%).
RETAKE_ABOVE = 1.2

#: Retakes at most per sample: a window that outlasts them is left in the value, as without the probe.
MAX_RETAKES = 2

#: Probes in a row that must read normal before a retake: one alone can be a lucky reading inside a slow window.
SETTLED_PROBES = 2

#: The longest wait for the probe to read normal (90% of the slow windows seen ended within 35 ms).
SETTLE_CAP_NS = 50_000_000


def reference_loop(loops: int = PROBE_LOOPS) -> int:
    """The probe's work: a fixed pure-Python loop, the same in every worker; the run's reference workload
    (:func:`~stratabench.engine.rounds.reference_ns`) is the same loop, longer."""
    total = 0
    for value in range(loops):
        total += value * value % 7
    return total


def machine_probe(clock: Clock = SYSTEM_CLOCK, work: Callable[[], object] = reference_loop) -> Callable[[], int]:
    """A probe: the thread's CPU time of ``work`` in nanoseconds (a slower vCPU shows in it; a preemption does not).

    ``work`` is injectable so that tests drive the probe's readings with a fake clock.
    """
    thread = clock.thread_cpu_ns

    def probe() -> int:
        start = thread()
        work()
        return thread() - start

    return probe


Sample = TypeVar("Sample")


@dataclass
class Taken(Generic[Sample]):
    """What :func:`take_sample` took: the sample kept and its probe figure, and the samples set aside with theirs.

    A probe figure is the slower of the probes before and after the sample, in nanoseconds.
    """

    kept: Sample
    probe_ns: float
    set_aside: list[tuple[Sample, float]] = field(default_factory=list)


def take_sample(sample: Callable[[], Sample], probe: Callable[[], int], median_ns: float,
                clock: Clock = SYSTEM_CLOCK, prepare: Callable[[], object] | None = None) -> Taken[Sample]:
    """Take ``sample`` between two probes; retake it while the probes say the machine was slow (module docstring).

    ``prepare`` runs, untimed, before each sample's first probe (a fresh state, a collection), so that the probe
    is right before the timed loop.
    """
    limit = RETAKE_ABOVE * median_ns
    retakes = 0
    set_aside: list[tuple[Sample, float]] = []
    while True:
        if prepare is not None:
            prepare()
        before = probe()
        taken = sample()
        figure = float(max(before, probe()))
        if figure <= limit or retakes == MAX_RETAKES:
            return Taken(taken, figure, set_aside)
        set_aside.append((taken, figure))
        retakes += 1
        _settle(probe, limit, clock)


def _settle(probe: Callable[[], int], limit: float, clock: Clock) -> None:
    """Run the probe until it reads at most ``limit`` :data:`SETTLED_PROBES` times in a row, or the cap has passed."""
    until = clock.wall_ns() + SETTLE_CAP_NS
    normal = 0
    while normal < SETTLED_PROBES and clock.wall_ns() < until:
        normal = normal + 1 if probe() <= limit else 0


@dataclass
class ProbeMedian:
    """The run's probe median, kept by the parent: the median of the last :data:`PROBE_WINDOW` figures its workers
    reported.

    A moving median, not the whole run's: in a default run of the cache suite under the lock, every probe of the
    last round and a half read 2.4× the run's median (602 µs against 250 µs) while the cells' samples were at
    their medians, so a run-wide median set aside all 72 of that round's samples for nothing. A shift that lasts
    seconds (a round's zygote, the host) moves a moving median with it; a slow window of tens of
    milliseconds, one visit or a few, does not. Before any worker reported, ``seed`` (the parent's own reading)
    stands in; with neither, there is no median and nothing is retaken.
    """

    seed: float | None = None
    figures: deque[float] = field(default_factory=lambda: deque(maxlen=PROBE_WINDOW))

    @classmethod
    def measured(cls, probe: Callable[[], int], readings: int = 21) -> ProbeMedian:
        """Seeded with the median of ``readings`` figures of ``probe`` taken here, each the slower of two, as a
        worker's are."""
        return cls(statistics.median(float(max(probe(), probe())) for _ in range(readings)))

    def add(self, figures: Iterable[float]) -> None:
        self.figures.extend(figures)

    @property
    def median_ns(self) -> float | None:
        return statistics.median(self.figures) if self.figures else self.seed


#: Figures in the moving median: about two seconds of a run's visits, many more than a slow window spans.
PROBE_WINDOW = 31
