"""The treestore answer: one JSON file or per-node diffs, per operation family and size.

The study's question is "which approach wins for which operation, and from
what size on?". The answer takes it family by family (reads, cached reads,
bulk writes, single edits, removals) and size by size: within one family, one
N and one state mode, every layout (backend) is compared on the same tests
only, the winner is the one with the smallest geometric mean time over them,
and its margin is the geometric mean of the paired ratios runner-up / winner
(:func:`~stratabench.report.paired.paired_ratio`). Where several sizes were
run, the answer says at which N the winner changes. Then one sentence per
family answers "one JSON file or per-node diffs?": json-file against the best
per-node layout.

In the study's own state mode (``sysrepo``) tests that consume their
precondition change data on try 1 only (docs/studies/treestore.md §7.3): their later tries are
no-ops, so only try 1 is compared, and one try is too few to judge. The
``fresh-state`` mode, when run, replaces them.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stratabench.options import RunOptions
from stratabench.report.answer import Answer, Pick
from stratabench.report.paired import ENOUGH, PairedRatio, geometric_mean, paired_ratio, ratio_of_samples
from stratabench.results.records import CellResult
from stratabench.suites.kit.reports import study_answer
from stratabench.suites.treestore.catalog import TESTS
from stratabench.suites.treestore.suite import ORDER
from stratabench.units import format_ratio

__all__ = ["ANSWER_FAMILIES", "treestore_answer"]

ANSWER_FAMILIES: Mapping[str, tuple[int, ...]] = {
    "reads": (1, 2, 3, 5, 6), "cached reads": (4,), "bulk writes": (7, 8, 9, 10, 11),
    "single edits": (16, 17, 18, 19, 20, 21, 22), "removals": (12, 13, 14, 15)}
"""The operation families the answer is given for, by test number (a cached read skips the load, so it is apart)."""

BASELINE = "json-file"
_CONSUMES = frozenset(test.number for test in TESTS if test.consumes_state)
#: Parameters that are not held fixed across a comparison: the layout (its backend and store URL), the test
#: (the family is the unit), and the tries (a count of samples).
_NOT_SETTING = ("backend", "store", "test", "test_name", "family", "tries")


@dataclass(frozen=True)
class _Ranked:
    """One family at one setting: the layouts fastest first, the margin of the first over the second."""

    family: str
    setting: tuple[tuple[str, Any], ...]
    order: list[str]
    margin: PairedRatio | None
    compared: tuple[tuple[CellResult, CellResult], ...]
    one_try: bool

    @property
    def n(self) -> int:
        return int(dict(self.setting)["n"])


def _setting(result: CellResult) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, v) for k, v in result.params.items() if k not in _NOT_SETTING))


def _samples(result: CellResult, sysrepo_state: bool) -> tuple[float, ...]:
    samples = result.metrics["wall_ns"].samples
    # Later tries of a state-consuming test are no-op commits: only try 1 does the operation.
    return samples[:1] if sysrepo_state and int(result.params["test"]) in _CONSUMES else samples


def _ratio(slower: CellResult, faster: CellResult, sysrepo_state: bool) -> PairedRatio | None:
    if sysrepo_state and int(slower.params["test"]) in _CONSUMES:
        return ratio_of_samples(_samples(slower, sysrepo_state), _samples(faster, sysrepo_state))
    return paired_ratio(slower, faster)


def _geomean_time(cells: Sequence[CellResult], sysrepo_state: bool) -> float:
    values = [statistics.median(_samples(c, sysrepo_state)) for c in cells]
    return math.exp(sum(math.log(max(v, 1.0)) for v in values) / len(values))


def _rank(family: str, numbers: Sequence[int], setting: tuple[tuple[str, Any], ...],
          cells: Mapping[tuple[str, int], CellResult], only: Sequence[str] | None = None) -> _Ranked | None:
    """The layouts of one family at one setting, on the tests every one of them measured."""
    backends = sorted({b for b, _ in cells}, key=lambda b: ORDER.index(b) if b in ORDER else len(ORDER))
    if only is not None:
        backends = [b for b in backends if b in only]
    tests = [t for t in numbers if all((b, t) in cells for b in backends)]
    if len(backends) < 2 or not tests:
        return None
    sysrepo = dict(setting).get("state") == "sysrepo"
    order = sorted(backends, key=lambda b: _geomean_time([cells[b, t] for t in tests], sysrepo))
    pairs = tuple((cells[order[1], t], cells[order[0], t]) for t in tests)
    ratios = [r for r in (_ratio(slow, fast, sysrepo) for slow, fast in pairs) if r is not None]
    margin = geometric_mean(ratios) if len(ratios) == len(pairs) else None
    one_try = sysrepo and any(t in _CONSUMES for t in tests)
    return _Ranked(family, setting, order, margin, pairs, one_try)


def _sure(ranked: _Ranked) -> str:
    margin = ranked.margin
    if margin is None:
        return "not measured"
    word = margin.sureness()
    if word != "too few to judge":
        return word
    if ranked.one_try:
        return ("too few to judge: only try 1 of a removal or edit changes data in the sysrepo state mode; "
                "--set treestore.state=fresh-state --set treestore.tries=10")
    return f"too few to judge: {margin.n} tries a cell (needs {ENOUGH}); --set treestore.tries=10"


def _setting_label(ranked: _Ranked, varied: set[str]) -> str:
    return f"{ranked.family} {_where(ranked, varied)}"


def _where(ranked: _Ranked, varied: set[str]) -> str:
    """``at 2,000 list entries``, with the other settings that vary in the run (``(core incremental)``)."""
    extra = [f"{key} {value}" for key, value in ranked.setting if key in varied and key != "n"]
    return f"at {ranked.n:,} list entries" + (f" ({', '.join(extra)})" if extra else "")


def _by(margin: PairedRatio | None) -> str:
    return "-" if margin is None else f"{format_ratio(margin.value)} faster {margin.interval}"


def _json_or_diffs(family: str, verdicts: Sequence[tuple[_Ranked, _Ranked | None]], varied: set[str]) -> str:
    """One sentence: json-file against the best per-node layout, size by size (and state mode by state mode)."""
    parts = []
    for ranked, versus in verdicts:
        if versus is None or versus.margin is None:
            continue
        json_wins = versus.order[0] == BASELINE
        rival = versus.order[1] if json_wins else versus.order[0]
        sure = versus.margin.sureness()
        what = "one JSON file" if json_wins else f"per-node diffs ({rival})"
        against = f"{rival}, the best per-node layout" if json_wins else BASELINE
        figure = f"{format_ratio(versus.margin.value)} faster than {against} {versus.margin.interval}"
        tail = "" if sure == "clear" else f" ({sure})"
        parts.append(f"{what} {_where(ranked, varied)}: {figure}{tail}")
    if not parts:
        return f"{family}: not answered here: json-file and a per-node layout did not both run these tests."
    return f"{family}: one JSON file or per-node diffs? " + "; ".join(parts) + "."


@study_answer("treestore")
def treestore_answer(results: Sequence[CellResult], options: RunOptions) -> Answer | None:
    """Per family and N: the winning layout, by what paired ratio, where the winner changes; JSON or diffs."""
    ours = [r for r in results if r.suite == "treestore" and r.ok and "wall_ns" in r.metrics]
    if not ours:
        return None
    grouped: dict[tuple[tuple[str, Any], ...], dict[tuple[str, int], CellResult]] = {}
    for result in ours:
        grouped.setdefault(_setting(result), {})[result.params["backend"], int(result.params["test"])] = result
    settings = sorted(grouped, key=lambda s: [str(v) for _, v in s if not isinstance(v, int)] + [dict(s)["n"]])
    varied = {key for key in dict(settings[0]) if len({dict(s).get(key) for s in settings}) > 1}
    found = Answer("treestore", "one JSON file or per-node diffs: which layout wins each kind of operation, "
                   "from what size on")
    for family, numbers in ANSWER_FAMILIES.items():
        ranked_by_setting = []
        for setting in settings:
            cells = grouped[setting]
            ranked = _rank(family, numbers, setting, cells)
            if ranked is None:
                continue
            per_node = next(b for b in ranked.order if b != BASELINE)
            versus = _rank(family, numbers, setting, cells, only=[BASELINE, per_node])
            ranked_by_setting.append((ranked, versus))
            found.picks.append(Pick(_setting_label(ranked, varied), ranked.order[0], _by(ranked.margin),
                                    ranked.order[1], _sure(ranked), ranked.margin, ranked.compared))
        if not ranked_by_setting:
            continue
        found.summary.append(_json_or_diffs(family, ranked_by_setting, varied))
        found.summary += _crossovers(family, [r for r, _ in ranked_by_setting], varied)
    if not found.picks:
        return None
    found.lines.append("Each row compares the layouts on the same tests at one size and state mode only: the "
                       "winner has the smallest geometric mean time over the family's tests, and 'by' is the "
                       "geometric mean of the paired ratios runner-up / winner with its interval.")
    return found


def _crossovers(family: str, ranked: Sequence[_Ranked], varied: set[str]) -> list[str]:
    """Where the winner changes with N, within each other setting (state mode...)."""
    lines = []
    by_rest: dict[tuple[tuple[str, Any], ...], list[_Ranked]] = {}
    for r in ranked:
        by_rest.setdefault(tuple((k, v) for k, v in r.setting if k != "n"), []).append(r)
    for rest, sizes in by_rest.items():
        sizes.sort(key=lambda r: r.n)
        for before, after in zip(sizes, sizes[1:]):
            if before.order[0] != after.order[0]:
                where = ", ".join(f"{k} {v}" for k, v in rest if k in varied)
                sure = all(r.margin is not None and r.margin.sureness() == "clear" for r in (before, after))
                lines.append(f"{family}{f' ({where})' if where else ''}: the winner changes between "
                             f"{before.n:,} and {after.n:,} list entries, from {before.order[0]} to "
                             f"{after.order[0]}" + ("" if sure else " (not sure: see how sure above)") + ".")
    return lines
