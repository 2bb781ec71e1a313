"""The comparison of two results files: the same cells, a ratio of medians each."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stratabench.metrics import metric
from stratabench.report.compare import Ratio, ratio
from stratabench.report.table import Column, Table
from stratabench.results.format import ResultsFile
from stratabench.results.records import CellResult

__all__ = ["Change", "compare_results", "comparison_table"]


@dataclass(frozen=True)
class Change:
    """One cell present and measured in both files.

    Attributes
    ----------
    suite, cell
        The cell's identity.
    before, after
        Its results in the first and second file.
    ratio
        ``after / before`` of the metric's medians, with the noise flag.
    """

    suite: str
    cell: str
    before: CellResult
    after: CellResult
    ratio: Ratio

    @property
    def verdict(self) -> str:
        """``within noise``, or whether the second file is better or worse on the metric."""
        if self.ratio.within_noise:
            return "within noise"
        return "slower" if self.ratio.value > 1 else "faster"


def _key(result: CellResult) -> tuple[str, str, str]:
    return (result.suite, result.cell, repr(sorted(result.params.items())))


def compare_results(before: ResultsFile, after: ResultsFile, metric_name: str) -> tuple[list[Change], list[str]]:
    """Pair the cells of two runs and compare one metric.

    Returns the changes, in the second file's order, and one line per cell
    that could not be compared (missing from a file, failed, or without
    the metric), so nothing is dropped silently.
    """
    metric(metric_name)
    earlier = {_key(result): result for result in before.cells}
    changes: list[Change] = []
    skipped: list[str] = []
    for result in after.cells:
        old = earlier.pop(_key(result), None)
        name = f"{result.suite} {result.cell}"
        if old is None:
            skipped.append(f"{name}: only in the second file")
            continue
        if not (old.ok and result.ok):
            skipped.append(f"{name}: failed in {'the first' if not old.ok else 'the second'} file")
            continue
        value = ratio(result.summary(metric_name), old.summary(metric_name))
        if value is None:
            skipped.append(f"{name}: no {metric_name} in both files")
            continue
        changes.append(Change(result.suite, result.cell, old, result, value))
    skipped += [f"{suite} {cell}: only in the first file" for suite, cell, _ in earlier]
    return changes, skipped


def comparison_table(changes: Sequence[Change], skipped: Sequence[str], metric_name: str,
                     before: ResultsFile, after: ResultsFile) -> Table:
    """One row per compared cell: both medians, the ratio and a verdict."""
    fmt = metric(metric_name).format
    table = Table(
        f"compare {metric_name}: {before.header.get('run_id')} → {after.header.get('run_id')}",
        [Column("suite", "suite"), Column("cell", "cell"), Column("before", "before", "right", fmt),
         Column("after", "after", "right", fmt), Column("ratio", "after/before", "right", lambda r: "-" if r is None else str(r)),
         Column("verdict", "verdict")],
    )
    for change in changes:
        row: dict[str, Any] = {
            "suite": change.suite, "cell": change.cell, "before": change.before.median(metric_name),
            "after": change.after.median(metric_name), "ratio": change.ratio, "verdict": change.verdict,
        }
        table.rows.append(row)
    table.notes = ["ratios are of medians; ~ and 'within noise' mark overlapping confidence intervals."]
    for label, results in (("first", before), ("second", after)):
        env = results.header.get("environment", {})
        table.notes.append(
            f"{label}: {results.header.get('started')}, {env.get('cpu')}, Python "
            f"{env.get('python', {}).get('version')}, revision {env.get('git_revision')}"
        )
    table.notes += [f"not compared: {line}" for line in skipped]
    return table
