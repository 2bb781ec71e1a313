"""The comparison of two results files: the same cells, each pair tested on its per-round values.

Each cell is tested on its per-round values (each round's median: one
fresh worker at one moment of its run), so the test sees the spread
between rounds, which includes the machine's drift over a run, and not the
spread of samples from one window. Files from before rounds (format 2), and
cells measured outside rounds (Go, treestore's tries, parking's runs), are
tested on their raw samples, with a note. One of four words per cell, as
Chromium's pinpoint does:

- the metric's word for the direction it moved (``slower``/``faster`` for
  a time, ``larger``/``smaller`` for bytes) when the ratio's interval
  excludes 1 and the ratio is beyond the minimum effect;
- ``unchanged`` when the ratio's interval lies within the minimum effect
  both ways: a change that large is ruled out;
- :data:`INCONCLUSIVE` otherwise: a change that neither shows nor can be
  ruled out, with the effect it could still hide (:attr:`Change.could_hide`).

The ratio and its interval (:func:`log_ratio_test`). The ratio is that of
the two sides' geometric means; its interval is Welch's t interval of the
difference of the mean logarithms (``scipy.stats.ttest_ind``, unequal
variances: the two runs are not paired), at the **family level** of
``stratabench ab`` (:func:`stratabench.report.ab.family_level`): ``1 - 0.05
/ cells``, Bonferroni's correction for every cell compared, so the chance
that a comparison of two runs of identical code calls *any* cell changed is
at most 5% (whatever the cells' dependence), and the words are
:func:`stratabench.report.ab.verdict_word`'s. Why: tested one by one at
5%, about 450 cells of identical code gave 16 "faster" calls in a default
pair (one in 20, as a per-cell level must). What it costs: a wider
interval. With the six rounds of a default run a side (Welch's df about
10, t = 6.1 for 453 cells), a change is called when it exceeds about 3.5
times the round-to-round spread of the cell's logs (the interval's
half-width is t x sd x sqrt(2/6)): a 10% regression in a cell whose rounds
vary by 2-2.5%, a 20% one at 5%; noisier cells stay inconclusive, counted,
with the change they could still hide. A rank test cannot reach such a
level with six values a side (its smallest two-sided p is 2/924).

A gate fails on a change for the worse beyond its factor. The minimum
effect is the size of change a user cares about and the machine can
show; :data:`DEFAULT_MIN_EFFECT` says why 5%. A pair with fewer than
:data:`MIN_VALUES` values a side is not tested (Welch's df could fall to
one, where no interval says anything): its verdict is :data:`CANNOT_JUDGE`,
counted and named, and a regression gate fails on it (issue 27: a gate
must not pass what it could not test; measure such cells with more tries).

An exact metric (a count: instructions, bytes stored, SQL statements,
allocations; :mod:`stratabench.metrics` gives each its tolerance) is never put
through the test: a change beyond its tolerance is a change. Whatever
metric is compared, every exact metric both cells of a pair carry is checked
so, and each one that moved beyond its tolerance is named
(:attr:`Comparison.exact_changes`).

Without a metric named, each pair is compared on the metric its cells are
judged on (:func:`~stratabench.results.records.judged_metric_of`): the
thread's CPU time for work inside the worker, wall time for cells that wait
on files or servers (and for files from before the choice), the figure the
run's own intervals and verdicts used.

Cells match on suite, cell name and parameters; every cell that does not
match, failed, or lacks the metric is listed with why, so nothing is
dropped silently.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


from stratabench.metrics import Metric, metric
from stratabench.metrics import METRICS
from stratabench.report.ab import FAMILY_ALPHA, INCONCLUSIVE, family_level, verdict_word
from stratabench.report.compare import SampleTest, compare_exact
from stratabench.report.table import Column, Table
from stratabench.results.format import ResultsFile
from stratabench.results.records import WALL_METRIC, CellResult, MetricResult, judged_metric_of
from stratabench.results.stats import level_label

__all__ = ["CANNOT_JUDGE", "DEFAULT_MIN_EFFECT", "INCONCLUSIVE", "MIN_VALUES", "Change", "Comparison", "ExactChange",
           "compare_results", "comparison_table", "log_ratio_test"]

#: The smallest change called a change: 5%, below the 10% a gate typically
#: fails on. A change must also have its interval exclude 1, and
#: "unchanged" needs the ratio's interval inside 5% both ways; two runs
#: of identical code whose medians are each known to ±5% (the default
#: run's target) can differ by more, and are then inconclusive, not changed.
DEFAULT_MIN_EFFECT = 0.05

#: The fewest values a side a pair is tested on; with fewer it cannot be judged.
MIN_VALUES = 3

#: The widest change an inconclusive cell is said to hide as a figure (:attr:`Change.could_hide_text`); beyond
#: ten times, "over 10×".
HIDDEN_EFFECT_CAP = 10.0

#: The verdict of a pair with fewer than :data:`MIN_VALUES` values a side.
CANNOT_JUDGE = "cannot judge"


@dataclass(frozen=True)
class Change:
    """One cell present and measured in both files.

    Attributes
    ----------
    suite, cell
        The cell's identity.
    before, after
        Its results in the first and second file.
    test
        ``after / before`` of the metric's geometric means, its interval at the family level and Welch's p
        (:func:`log_ratio_test`; for an exact metric, the ratio of its medians).
    verdict
        ``unchanged``, the metric's word for the direction it moved
        (``slower``/``faster`` for a time, ``larger``/``smaller`` for bytes),
        :data:`INCONCLUSIVE`, or :data:`CANNOT_JUDGE` when the values are
        too few for the test.
    worse
        Whether the change is a change for the worse.
    values
        How many values each side was tested on: rounds (format 3), or raw
        samples for a file from before rounds.
    metric
        The metric the pair was tested on.
    """

    suite: str
    cell: str
    before: CellResult
    after: CellResult
    test: SampleTest
    verdict: str
    worse: bool
    values: tuple[int, int] = (0, 0)
    metric: str = ""

    @property
    def changed(self) -> bool:
        return self.verdict not in ("unchanged", CANNOT_JUDGE, INCONCLUSIVE)

    @property
    def could_hide(self) -> float:
        """The largest change the ratio's interval still allows, as a fraction (0.12: a 12% change either way)."""
        return max(self.test.high - 1, 1 - self.test.low, 0.0) if self.test.low > 0 else math.inf

    @property
    def could_hide_text(self) -> str:
        """:attr:`could_hide` for a reader: "±8%", or "over 10×" when the interval is that wide.

        Six rounds that disagree give a Welch interval at the family level with
        few degrees of freedom, whose upper end can reach 10^19: printed as a
        percentage it reads as a bug, and any figure past ten times says the
        same thing (the cell's rounds cannot bound a change at all).
        """
        return f"±{self.could_hide:.0%}" if self.could_hide < HIDDEN_EFFECT_CAP - 1 else f"over {HIDDEN_EFFECT_CAP:g}×"

    @property
    def judged(self) -> bool:
        """Whether the pair had enough values a side (:data:`MIN_VALUES`) to be tested at all."""
        return self.verdict != CANNOT_JUDGE


@dataclass(frozen=True)
class ExactChange:
    """An exact metric of one pair that moved beyond its tolerance.

    Attributes
    ----------
    suite, cell
        The cell's identity.
    metric
        The exact metric.
    before, after
        Its medians in the first and second file.
    """

    suite: str
    cell: str
    metric: Metric
    before: float
    after: float

    @property
    def ratio(self) -> float:
        return self.after / self.before if self.before else math.inf

    @property
    def worse(self) -> bool:
        return (self.after > self.before) == (self.metric.better == "lower")

    def line(self) -> str:
        """``suite cell: metric before → after (ratio, word; tolerance)``."""
        up, down = self.metric.change_words
        fmt = self.metric.format
        return (f"{self.suite} {self.cell}: {self.metric.name} {fmt(self.before)} → {fmt(self.after)} "
                f"({self.ratio:.3f}×, {up if self.after > self.before else down}; exact, tolerance "
                f"{self.metric.tolerance_text})")


def _exact_changes(old: CellResult, new: CellResult, compared: str) -> list[ExactChange]:
    """Every exact metric, but the one compared, that both cells carry and that moved beyond its tolerance."""
    moved = []
    for name, measured in METRICS.items():
        first, second = old.median(name), new.median(name)
        if measured.exact and name != compared and first is not None and second is not None \
                and measured.beyond_tolerance(first, second):
            moved.append(ExactChange(new.suite, new.cell, measured, first, second))
    return moved


@dataclass(frozen=True)
class Comparison:
    """Every pair of a metric in two files, and what could not be paired.

    Attributes
    ----------
    metric
        The metric compared; with :attr:`judged`, the one whose words and
        units every judged metric shares (wall time).
    changes
        One per pair, in the second file's order.
    unmatched
        One line per cell not compared, saying why.
    failed
        The lines of :attr:`unmatched` that are cells failed in either file.
    exact_changes
        Every exact metric of a pair, other than :attr:`metric`, that moved
        beyond its tolerance, named.
    min_effect
        The smallest relative change called a change.
    machines
        A line saying the files come from different machines, or ``None``.
    same_code
        A line saying both files were measured at one clean revision, so
        whatever changed is the machine's or the data's; ``None`` otherwise.
    drift
        A line saying a file is from before rounds, so its cells were
        tested on raw samples whose spread leaves out the run's drift.
    judged
        Each pair was tested on its cells' judged metric (:attr:`Change.metric`).
    level
        The level of every pair's interval: :func:`~stratabench.report.ab.family_level` of the pairs tested.
    machine_level
        A line giving the second run's machine-probe level over the first's
        (:attr:`~stratabench.results.format.ResultsFile.probe_level`), or
        ``None`` when either file has no probes.
    """

    metric: Metric
    changes: list[Change]
    unmatched: list[str]
    min_effect: float
    machines: str | None = None
    same_code: str | None = None
    failed: list[str] = field(default_factory=list)
    exact_changes: list[ExactChange] = field(default_factory=list)
    drift: str | None = None
    judged: bool = False
    level: float = family_level(1)
    machine_level: str | None = None
    counts: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        up, down = self.metric.change_words
        counts = {up: 0, down: 0, "unchanged": 0, INCONCLUSIVE: 0, CANNOT_JUDGE: 0}
        for change in self.changes:
            counts[change.verdict] += 1
        object.__setattr__(self, "counts", counts)

    @property
    def geomean(self) -> float | None:
        """The geometric mean of the ratios, or ``None`` with nothing compared."""
        logs = [math.log(c.test.ratio) for c in self.changes if c.test.ratio > 0 and math.isfinite(c.test.ratio)]
        return math.exp(sum(logs) / len(logs)) if logs else None

    def regressions(self, factor: float) -> list[Change]:
        """Changes for the worse by more than ``factor`` (``1.10``: 10% worse)."""
        return [c for c in self.changes if c.worse and _worse_by(c, self.metric) > factor]

    def inconclusive(self) -> list[Change]:
        """Pairs whose change neither shows nor can be ruled out."""
        return [c for c in self.changes if c.verdict == INCONCLUSIVE]

    def exact_regressions(self, factor: float) -> list[ExactChange]:
        """Exact metrics (other than the one compared) worse by more than ``factor``."""
        return [c for c in self.exact_changes
                if c.worse and (c.ratio if c.metric.better == "lower" else 1 / c.ratio if c.ratio else math.inf) > factor]

    def unjudged(self) -> list[Change]:
        """Pairs with fewer than :data:`MIN_VALUES` values a side: a gate fails on them."""
        return [c for c in self.changes if not c.judged]

    def summary(self) -> str:
        """One line: cells compared, how many moved each way, the geomean ratio."""
        up, down = self.metric.change_words
        geomean = self.geomean
        line = (f"{len(self.changes)} cells compared: {self.counts[up]} {up}, {self.counts[down]} {down}, "
                f"{self.counts['unchanged']} unchanged, {self.counts[INCONCLUSIVE]} {INCONCLUSIVE}"
                f"{f', {self.counts[CANNOT_JUDGE]} {CANNOT_JUDGE} (too few samples)' if self.counts[CANNOT_JUDGE] else ''}"
                "; geomean ratio "
                f"{'-' if geomean is None else f'{geomean:.3f}'} ({self.metric_text}, after/before; "
                f"{self._rule()}); {len(self.unmatched)} not compared")
        if self.exact_changes:
            line += f"; {len(self.exact_changes)} exact metrics moved beyond their tolerance (named below)"
        moved = self.counts[up] + self.counts[down]
        notes = [self.machines] if self.machines else []
        notes += [self.drift] if self.drift else []
        notes += [self.machine_level] if self.machine_level else []
        if self.same_code and moved:
            notes.append(self.same_code)
        return line + "".join(f"; {note}" for note in notes)


    @property
    def metric_text(self) -> str:
        """The metric compared, as said: ``wall_ns``, or ``judged: 200 on thread_cpu_ns, 31 on wall_ns``."""
        if not self.judged:
            return self.metric.name
        used: dict[str, int] = {}
        for change in self.changes:
            used[change.metric] = used.get(change.metric, 0) + 1
        return "judged metric: " + (", ".join(f"{count} on {name}" for name, count in sorted(used.items())) or "none")

    def _rule(self) -> str:
        if self.metric.exact:
            return f"exact: a change is beyond {self.metric.tolerance_text}"
        return (f"Welch's t interval of the log-ratio at {level_label(self.level)}, 1 - {FAMILY_ALPHA:.0%} / cells; "
                f"a change: the interval excludes 1 and the ratio is beyond {self.min_effect:.0%}")


def _worse_by(change: Change, measured: Metric) -> float:
    return change.test.ratio if measured.better == "lower" else 1 / change.test.ratio if change.test.ratio else math.inf


def _identity(result: CellResult) -> tuple[str, str, str]:
    return (result.suite, result.cell, repr(sorted(result.params.items(), key=lambda item: str(item[0]))))


def log_ratio_test(before: Sequence[float], after: Sequence[float], level: float) -> SampleTest | None:
    """``after / before`` of the geometric means, with Welch's t interval of the log-ratio at ``level`` and its p.

    ``None`` when a value is not a positive finite number (a time or a count of zero has no logarithm).
    Two sides without any spread give the ratio itself as the interval, p 0 (1 when equal).
    """
    if not all(math.isfinite(value) and value > 0 for value in (*before, *after)) or not (before and after):
        return None
    first, second = [math.log(value) for value in before], [math.log(value) for value in after]
    shift = math.fsum(second) / len(second) - math.fsum(first) / len(first)
    ratio = math.exp(shift)
    if len(first) < 2 or len(second) < 2 or (max(first) == min(first) and max(second) == min(second)):
        return SampleTest(ratio, ratio, ratio, level, 1.0 if shift == 0 or len(first) < 2 or len(second) < 2 else 0.0)
    from scipy import stats  # here, not with the module: report/ab.py's log_ratio_interval says why

    tested = stats.ttest_ind(second, first, equal_var=False)
    interval = tested.confidence_interval(level)
    # Few values with much spread can put the bound beyond a float's range: the interval is then unbounded.
    high = float(interval.high)
    return SampleTest(ratio, math.exp(float(interval.low)), math.exp(high) if high < 700 else math.inf, level,
                      float(tested.pvalue))


def _verdict(test: SampleTest, measured: Metric, min_effect: float, counts: tuple[int, int]) -> tuple[str, bool]:
    up, down = measured.change_words
    if test.exact:
        if not measured.beyond_tolerance(1.0, test.ratio):
            return "unchanged", False
        return (up, measured.better == "lower") if test.ratio > 1 else (down, measured.better != "lower")
    if min(counts) < MIN_VALUES:
        return CANNOT_JUDGE, False
    word = verdict_word(test.ratio, test.low, test.high, min_effect, measured)
    return word, word == (up if measured.better == "lower" else down)


def _values(first: MetricResult, second: MetricResult) -> tuple[list[float], list[float]]:
    """What a pair is tested on: per-round values when both files have rounds, else the raw samples."""
    if first.rounds is not None and second.rounds is not None:
        return list(first.per_round.values()), list(second.per_round.values())
    return list(first.samples), list(second.samples)


def _environment(results: ResultsFile) -> dict[str, Any]:
    """The header's environment record, empty when the file has none."""
    env = results.header.get("environment")
    return env if isinstance(env, dict) else {}


def _machine(results: ResultsFile) -> tuple[Any, ...]:
    env = _environment(results)
    return tuple(env.get(key) for key in ("hostname", "cpu", "cpu_count", "machine"))


def _machines(before: ResultsFile, after: ResultsFile) -> str | None:
    first, second = _machine(before), _machine(after)
    if first == second:
        return None
    return (f"different machines ({first[0]}, {first[1]} → {second[0]}, {second[1]}): "
            "a ratio mixes the code's change with the machine's")


def _same_code(before: ResultsFile, after: ResultsFile) -> str | None:
    first, second = (_environment(results).get("git_revision") for results in (before, after))
    if not isinstance(first, str) or first != second or first.endswith("-dirty"):
        return None
    # Identical code measured twice: a gate that fails here is measuring the machine's swings.
    return f"both runs are revision {first[:12]}: what changed is the machine's speed or the data, not the code"


def _machine_level(before: ResultsFile, after: ResultsFile) -> str | None:
    first, second = before.probe_level, after.probe_level
    if first is None or second is None:
        return None
    # The machine drifts over minutes (an idle loop here: 0.97x to 1.02x of its median over 4 minutes), so two runs
    # of identical code can differ by a few percent in every cell at once, beyond each run's intervals; the probe
    # timed beside every sample says how much of that is the machine.
    return (f"the machine probe took {second[0] / first[0]:.3f}x as long in the second run as in the first "
            f"(medians of {first[1]:,} and {second[1]:,} probes beside the samples): cells that moved together "
            "by about that much moved with the machine")


def _describe_params(theirs: CellResult, ours: CellResult) -> str:
    keys = sorted(set(theirs.params) | set(ours.params), key=str)
    differ = [str(key) for key in keys if theirs.params.get(key) != ours.params.get(key)]
    return ", ".join(differ)


def compare_results(before: ResultsFile, after: ResultsFile, metric_name: str | None, *,
                    min_effect: float = DEFAULT_MIN_EFFECT) -> Comparison:
    """Pair the cells of two runs and test one metric on each pair: ``metric_name``, or (``None``) the pair's judged one.

    Returns every pair, in the second file's order, and one line per cell
    that could not be compared (only in one file, the same name with other
    parameters, failed, or without the metric), so nothing is dropped
    silently.
    """
    judged = metric_name is None
    measured = metric(WALL_METRIC if metric_name is None else metric_name)
    earlier = {_identity(result): result for result in before.cells}
    by_name = {(result.suite, result.cell): result for result in before.cells}
    pairs: list[tuple[CellResult, CellResult, str, list[float], list[float]]] = []
    unmatched: list[str] = []
    failed: list[str] = []
    for result in after.cells:
        old = earlier.pop(_identity(result), None)
        name = f"{result.suite} {result.cell}"
        if old is None:
            namesake = by_name.get((result.suite, result.cell))
            if namesake is not None and _identity(namesake) in earlier:
                earlier.pop(_identity(namesake))
                unmatched.append(f"{name}: parameters differ ({_describe_params(namesake, result)})")
            else:
                unmatched.append(f"{name}: only in the second file")
            continue
        if not (old.ok and result.ok):
            which = "both files" if not (old.ok or result.ok) else "the first file" if not old.ok else "the second file"
            unmatched.append(f"{name}: failed in {which}")
            failed.append(unmatched[-1])
            continue
        used = judged_metric_of(old, result) if metric_name is None else metric_name
        first, second = old.metrics.get(used), result.metrics.get(used)
        if first is None or second is None:
            unmatched.append(f"{name}: no {used} in {'the first file' if first is None else 'the second file'}")
            continue
        pairs.append((old, result, used, *_values(first, second)))
    # Bonferroni over the pairs the test judges: every one compared on a sampled metric, with enough values.
    level = family_level(sum(1 for *_, first_values, second_values in pairs
                             if not measured.exact and min(len(first_values), len(second_values)) >= MIN_VALUES))
    changes: list[Change] = []
    exact_changes: list[ExactChange] = []
    for old, result, used, before_values, after_values in pairs:
        test = compare_exact(before_values, after_values) if measured.exact else \
            log_ratio_test(before_values, after_values, level)
        if test is None:
            unmatched.append(f"{result.suite} {result.cell}: a value of {used} is zero, or not a number")
            continue
        counts = (len(before_values), len(after_values))
        verdict, worse = _verdict(test, measured, min_effect, counts)
        changes.append(Change(result.suite, result.cell, old, result, test, verdict, worse, counts, used))
        exact_changes += _exact_changes(old, result, used)
    for identity, result in earlier.items():
        unmatched.append(f"{identity[0]} {identity[1]}: only in the first file")
        if not result.ok:
            failed.append(f"{identity[0]} {identity[1]}: failed in the first file")
    old_files = [f"the {label} file's" for label, results in (("first", before), ("second", after)) if results.drift_note]
    drift = (f"{' and '.join(old_files)} cells were tested on their raw samples (format 2, before rounds): "
             "their spread does not include the run's drift") if old_files else None
    return Comparison(measured, changes, unmatched, min_effect, _machines(before, after), _same_code(before, after),
                      failed, exact_changes, drift, judged, level, _machine_level(before, after))


def comparison_table(comparison: Comparison, before: ResultsFile, after: ResultsFile) -> Table:
    """One row per compared cell: both medians, the ratio with its interval, p and a verdict."""
    measured = comparison.metric
    fmt = measured.format
    table = Table(
        f"compare {'the judged metric' if comparison.judged else measured.name}: "
        f"{before.header.get('run_id')} → {after.header.get('run_id')}",
        [Column("suite", "suite"), Column("cell", "cell"),
         *([Column("metric", "metric")] if comparison.judged else []), Column("before", "before", "right", fmt),
         Column("after", "after", "right", fmt), Column("ratio", "after/before", "right"),
         Column("interval", f"{level_label(comparison.level)} interval", "right"), Column("p", "p", "right"), Column("verdict", "verdict")],
    )
    for change in comparison.changes:
        table.rows.append({
            "suite": change.suite, "cell": change.cell, "metric": change.metric,
            "before": change.before.median(change.metric), "after": change.after.median(change.metric),
            "ratio": f"{change.test.ratio:.3f}",
            "interval": "-" if change.test.exact else f"{change.test.low:.3f}–{change.test.high:.3f}",
            "p": change.test.p_text,
            "verdict": change.verdict if change.verdict != INCONCLUSIVE
            else f"{INCONCLUSIVE} {change.could_hide_text}",
        })
    table.notes = [
        comparison.summary(),
        *(["metric: each cell's judged metric, the one its run's interval and verdicts used: thread_cpu_ns (the "
           "worker thread's CPU time) for work inside the worker, wall_ns for cells that wait on files or servers "
           "(--metric NAME compares every cell on one)"] if comparison.judged else []),
        "ratio: of counts, exact (no interval, no test)." if measured.exact else
        "ratio: of the geometric means of the per-round values (each round's median; the raw samples for a file "
        "from before rounds and for cells measured outside rounds), with Welch's t interval of the log-ratio at "
        f"{level_label(comparison.level)} (1 - {FAMILY_ALPHA:.0%} / cells compared: the chance that any unchanged "
        "cell is called changed is at most 5%); p: Welch's two-sided t test on the logs; cannot judge: fewer than "
        f"{MIN_VALUES} values a side; inconclusive ±x%: neither a change beyond "
        f"{comparison.min_effect:.0%} nor its absence shows; ±x% is the largest change its interval could still hide.",
    ]
    for label, results in (("first", before), ("second", after)):
        env = _environment(results)
        python = env.get("python")
        table.notes.append(
            f"{label}: {results.header.get('started')}, {env.get('cpu')}, Python "
            f"{python.get('version') if isinstance(python, dict) else None}, revision {env.get('git_revision')}"
        )
    table.notes += [f"exact change: {change.line()}" for change in comparison.exact_changes]
    table.notes += [f"not compared: {line}" for line in comparison.unmatched]
    return table
