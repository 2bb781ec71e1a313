"""The seven qualitative claims of docs/studies/treestore.md §9.1, judged on mean times (the reference's statistic).

The same rules judge this run and the published figures, so each claim
prints what it rests on twice: here and as published. A claim is judged on
the backends the run measured; one that rests on a network backend the run
did not have says so (``missing``) instead of guessing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from stratabench.suites.treestore.reference import PUBLISHED, REFERENCE_COLUMNS
from stratabench.units import format_ratio

__all__ = ["CLEARLY_CHEAPER", "ABOUT_EQUAL", "Judged", "Means", "judge_claims", "published_means"]

Means = Callable[[str, int, int], "float | None"]
"""(backend, N, test number) → mean seconds, or ``None`` when not measured."""

NETWORK = ("mongodb", "redis", "redis+search")
CLEARLY_CHEAPER = 0.67
"""Claim 5: MongoDB's ``remove whole subtree`` is "clearly cheaper" at most this fraction of ``remove all items``."""
ABOUT_EQUAL = (0.8, 1.25)
"""Claim 5: Redis's two removals are "about equal" when their ratio lies in this range."""
NAMES = {1: "get tree", 2: "get item", 3: "get tree hash", 4: "get tree hash cached", 5: "get user ordered tree",
         6: "get oper tree", 7: "create batch", 8: "create user ordered items", 9: "create all items",
         12: "remove all items", 14: "remove whole subtree", 17: "create an item cached"}


@dataclass(frozen=True)
class Judged:
    """One claim: ``holds`` (``None`` when a backend it needs was not measured) and its figures."""

    number: int
    claim: str
    holds: bool | None
    evidence: str
    missing: str = ""


def _x(value: float) -> str:
    return format_ratio(value)


def published_means(backend: str, n: int, number: int) -> float | None:
    column = REFERENCE_COLUMNS.get(backend)
    if column is None or n not in PUBLISHED:
        return None
    return float(PUBLISHED[n][number - 1][column])


class _Judge:
    def __init__(self, means: Means, backends: Sequence[str], n: int, sizes: Sequence[int]) -> None:
        self.means, self.n, self.sizes = means, n, sorted(sizes)
        self.per_node = [b for b in backends if b != "json-file"]
        self.network = [b for b in backends if b in NETWORK]
        self.missing: list[str] = []

    def mean(self, backend: str, number: int, n: int | None = None) -> float | None:
        value = self.means(backend, self.n if n is None else n, number)
        if value is None or value <= 0:
            self.missing.append(f"{backend} {NAMES.get(number, number)}")
            return None
        return value

    def ratio(self, backend: str, number: int, n: int | None = None) -> float | None:
        """backend / json-file for one test: below 1 is faster."""
        mine, base = self.mean(backend, number, n), self.mean("json-file", number, n)
        return None if mine is None or base is None else mine / base


def judge_claims(means: Means, backends: Sequence[str], n: int, sizes: Sequence[int]) -> list[Judged]:
    """Judge the seven claims at size ``n``; claim 1's growth uses every size in ``sizes``."""
    return [rule(_Judge(means, backends, n, sizes)) for rule in RULES]


def _verdict(judge: _Judge, number: int, claim: str, parts: list[tuple[bool, str]], needs_network: bool) -> Judged:
    missing = ", ".join(dict.fromkeys(judge.missing))
    if needs_network and not judge.network:
        missing = missing or "no network backend (mongodb, redis) in this run"
    # Each part says whether it holds, so a verdict made of parts shows which part broke it.
    evidence = "; ".join(f"{text} {'✓' if ok else '✗'}" for ok, text in parts)
    if missing:
        return Judged(number, claim, None, evidence, missing)
    return Judged(number, claim, all(ok for ok, _ in parts), evidence)


def tree_hash_wins_and_grows(judge: _Judge) -> Judged:
    parts = []
    for backend in judge.per_node:
        ratios = {n: judge.ratio(backend, 3, n) for n in judge.sizes}
        here = ratios.get(judge.n)
        if here is None:
            continue
        factors = {n: 1 / r for n, r in ratios.items() if r}
        grows = all(factors[a] < factors[b] for a, b in zip(sorted(factors), sorted(factors)[1:]))
        trend = " → ".join(_x(factors[n]) for n in sorted(factors))
        parts.append((here < 1 and (grows or len(factors) < 2),
                      f"{backend} {trend} as fast" + ("" if len(factors) > 1 else " (one size: growth not shown)")))
    return _verdict(judge, 1, "get tree hash: every per-node backend beats json-file, by a factor that grows with N",
                    parts, needs_network=False)


def cached_hash_favours_the_file(judge: _Judge) -> Judged:
    parts = []
    for backend in judge.network:
        ratio = judge.ratio(backend, 4)
        if ratio is not None:
            parts.append((ratio > 1, f"{backend} {_x(ratio)} json-file's time"))
    return _verdict(judge, 2, "get tree hash cached: json-file beats every network backend", parts, True)


def whole_reads_and_bulk_writes_favour_the_file(judge: _Judge) -> Judged:
    parts = []
    for backend in judge.network:
        for number in (1, 2, 5, 7, 9):
            ratio = judge.ratio(backend, number)
            if ratio is not None:
                parts.append((ratio > 1, f"{backend} {NAMES[number]} {_x(ratio)}"))
    return _verdict(judge, 3, "get tree, get item, get user ordered tree, create batch, create all items: "
                              "the network backends are slower than json-file", parts, True)


def user_ordering_costs_the_databases(judge: _Judge) -> Judged:
    parts = []
    own = {}
    for backend in ["json-file", *judge.network]:
        ordered, plain = judge.mean(backend, 8), judge.mean(backend, 9)
        if ordered is None or plain is None:
            continue
        own[backend] = ordered / plain
        if backend == "json-file":
            parts.append((ordered <= plain, f"json-file {_x(ordered / plain)} its create all items"))
        else:
            parts.append((ordered > 2 * plain, f"{backend} {_x(ordered / plain)} its create all items"))
    mongo, redis = judge.ratio("mongodb", 8) if "mongodb" in judge.network else None, \
        judge.ratio("redis", 8) if "redis" in judge.network else None
    if mongo is not None and redis is not None:
        parts.append((mongo > redis, f"vs json-file: mongodb {_x(mongo)}, redis {_x(redis)}"))
    elif judge.network:
        judge.missing.append("both mongodb and redis, to compare them")
    return _verdict(judge, 4, "create user ordered items: over 2× create all items on each network backend, "
                              "no longer on json-file, and worse against json-file on MongoDB than on Redis",
                    parts, True)


def subtree_removal_is_cheap_on_mongodb_only(judge: _Judge) -> Judged:
    parts = []
    for backend, rule in (("mongodb", "clearly cheaper"), ("redis", "about equal")):
        if backend not in judge.network:
            judge.missing.append(backend)
            continue
        subtree, items = judge.mean(backend, 14), judge.mean(backend, 12)
        if subtree is None or items is None:
            continue
        share = subtree / items
        ok = share <= CLEARLY_CHEAPER if rule == "clearly cheaper" else ABOUT_EQUAL[0] <= share <= ABOUT_EQUAL[1]
        parts.append((ok, f"{backend} subtree/all items {share:.2f} ({rule})"))
    return _verdict(judge, 5, "remove whole subtree vs remove all items: clearly cheaper on MongoDB, "
                              "about equal on Redis", parts, True)


def cached_single_writes_favour_per_node(judge: _Judge) -> Judged:
    parts = []
    for backend in judge.per_node:
        ratio = judge.ratio(backend, 17)
        if ratio is not None:
            parts.append((ratio < 1, f"{backend} {_x(1 / ratio)} as fast"))
    return _verdict(judge, 6, "create an item cached: the per-node backends beat json-file", parts, False)


def oper_reads_are_alike(judge: _Judge) -> Judged:
    times = {b: judge.mean(b, 6) for b in ["json-file", *judge.per_node]}
    known = {b: t for b, t in times.items() if t is not None}
    parts = []
    if len(known) > 1:
        spread = max(known.values()) / min(known.values())
        parts.append((spread <= 1.5, f"slowest/fastest {spread:.2f} ({max(known, key=known.__getitem__)} / "
                                     f"{min(known, key=known.__getitem__)})"))
    return _verdict(judge, 7, "get oper tree: all backends within 1.5× of each other", parts, False)


RULES: tuple[Callable[[_Judge], Judged], ...] = (
    tree_hash_wins_and_grows,
    cached_hash_favours_the_file,
    whole_reads_and_bulk_writes_favour_the_file,
    user_ordering_costs_the_databases,
    subtree_removal_is_cheap_on_mongodb_only,
    cached_single_writes_favour_per_node,
    oper_reads_are_alike,
)
