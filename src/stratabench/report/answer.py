"""The answer a suite opens with: the best on time, on size and on memory, the trade-off, how sure.

A study's report turns its cells into :class:`Candidate` objects (one per
thing a reader could choose: a format, a cache tier, a codec × store) and
:func:`answer` picks the best on each aspect, says when the best is a tie,
and finds the Pareto frontier of time against size. The :class:`Answer` is
data: the terminal, Markdown and HTML formats lay it out, the JSON export
keeps its numbers.

A tie is a tie: when the runner-up's confidence interval overlaps the
winner's, the data cannot tell them apart and :class:`Best` lists both.
Sizes and memory figures tie within 1%: a reader would not choose on less.

A study whose choice is made per setting (per operation family and size, per
server) answers with :class:`Pick` rows instead: one like-for-like comparison
each, with the paired ratio it rests on and the cells it compared, so a test
can check that no answer ranks cells that differ in more than the choice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from stratabench.report.paired import PairedRatio
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult
from stratabench.results.stats import Summary
from stratabench.units import format_bytes, format_ns, format_ratio

__all__ = ["Answer", "Best", "Candidate", "Pick", "answer", "best_of", "frontier"]

Aspect = Literal["time", "size", "memory"]
_CLOSE = 0.01


@dataclass(frozen=True)
class Candidate:
    """One choice a reader could make, with what it costs.

    Attributes
    ----------
    name
        How the reader knows it (``orjson + zstd on lmdb``).
    time
        Its time per operation (the suite says which operation).
    size
        Bytes it stores or encodes to.
    memory
        Bytes of memory it uses (the suite says which measure).
    cell
        The cell its time was measured in, when there is one: what a check of the answer compares.
    """

    name: str
    time: Summary | None = None
    size: float | None = None
    memory: float | None = None
    cell: CellResult | None = field(default=None, compare=False, repr=False)

    def value(self, aspect: Aspect) -> float | None:
        if aspect == "time":
            return None if self.time is None else self.time.median
        return self.size if aspect == "size" else self.memory


@dataclass(frozen=True)
class Best:
    """The best candidate on one aspect.

    Attributes
    ----------
    aspect
        ``time``, ``size`` or ``memory``.
    label
        What "best" means here, for the reader (``fastest read of every record``).
    winners
        The best candidate, and every other the data cannot tell apart from it (a tie).
    runner_up
        The best candidate clearly behind the winners, if any.
    ci_level
        For time: the confidence level of the intervals compared.
    """

    aspect: Aspect
    label: str
    winners: tuple[Candidate, ...]
    runner_up: Candidate | None
    ci_level: float | None = None

    @property
    def tie(self) -> bool:
        return len(self.winners) > 1

    @property
    def value(self) -> float | None:
        return self.winners[0].value(self.aspect)

    @property
    def margin(self) -> float | None:
        """How far behind the runner-up is: its value ÷ the winner's (above 1)."""
        if self.runner_up is None:
            return None
        best, next_best = self.value, self.runner_up.value(self.aspect)
        return None if not best or next_best is None else next_best / best

    def formatted(self, candidate: Candidate) -> str:
        value = candidate.value(self.aspect)
        return format_ns(value) if self.aspect == "time" else format_bytes(value)

    @property
    def next_best(self) -> Candidate | None:
        """What the answer sets beside the winner: the closest candidate tied with it, else the runner-up.

        Beside a tie, the first candidate clearly behind would read as second best while the tied ones,
        closer, went unnamed.
        """
        return self.winners[1] if self.tie else self.runner_up

    @property
    def how_sure(self) -> str:
        """``tie (…)``, ``clear: …``, or ``only one measured``."""
        level = f"{self.ci_level:.0%} " if self.ci_level else ""
        if self.tie:
            why = f"{level}intervals overlap" if self.aspect == "time" else "within 1%"
            more = self.winners[2:]
            names = ", ".join(c.name for c in more[:2]) + (f" and {len(more) - 2} more" if len(more) > 2 else "")
            return f"tie ({why})" + (f"; so do {names}" if more else "")
        if self.runner_up is None:
            return "only one measured"
        margin = self.margin
        gap = "" if margin is None else f": next best {format_ratio(margin)}"
        apart = f" ({level}intervals apart)" if self.aspect == "time" else ""
        return f"clear{gap}{apart}"


@dataclass(frozen=True)
class Pick:
    """One like-for-like choice an answer makes: within ``setting``, ``choice`` beats ``against``.

    Attributes
    ----------
    setting
        What is held fixed, in the reader's words (``reads at 1,000 list entries``).
    choice
        What wins there (``json-file``), or what is measured (``python-orm``).
    measured
        By how much, with the interval (``1.8× faster [1.5-2.1×, 95%]``).
    against
        What it was compared with (``sqlite``).
    sure
        ``clear``, ``too close to call`` or ``too few to judge: ...`` with what to run.
    ratio
        The ratio behind ``measured``, for the JSON export.
    compared
        The pairs of cells compared (numerator, denominator): each pair differs in the choice alone.
    """

    setting: str
    choice: str
    measured: str
    against: str = "-"
    sure: str = ""
    ratio: PairedRatio | None = None
    compared: tuple[tuple[CellResult, CellResult], ...] = field(default=(), compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {"setting": self.setting, "choice": self.choice, "measured": self.measured, "against": self.against,
                "sure": self.sure, "ratio": None if self.ratio is None else self.ratio.to_json(),
                "compared": [[a.cell, b.cell] for a, b in self.compared]}


@dataclass
class Answer:
    """What a suite says first.

    Attributes
    ----------
    suite
        The suite's name.
    question
        The question it answers, in the reader's words.
    bests
        The best on each aspect measured.
    frontier
        The Pareto frontier of time against size: every candidate that no
        other beats on both, fastest first.
    lines
        Anything else the reader must know to use the answer (a cost that
        moved elsewhere, a choice left out and why).
    picks
        Like-for-like choices per setting, after the bests.
    summary
        The answer in a few sentences, first under the table (one per operation family, say).
    """

    suite: str
    question: str
    bests: list[Best] = field(default_factory=list)
    frontier: list[Candidate] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    picks: list[Pick] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)

    def table(self) -> Table:
        """The answer as a small table with its frontier and lines as notes."""
        table = Table(f"{self.suite}: the answer ({self.question})", [
            Column("aspect", "for"), Column("best", "answer"), Column("value", "measured", "right"),
            Column("next", "next best / against"), Column("sure", "how sure")])
        for best in self.bests:
            table.rows.append({
                "aspect": best.label, "best": best.winners[0].name, "value": best.formatted(best.winners[0]),
                "next": "-" if best.next_best is None else
                f"{best.next_best.name} ({best.formatted(best.next_best)})",
                "sure": best.how_sure,
            })
        for pick in self.picks:
            table.rows.append({"aspect": pick.setting, "best": pick.choice, "value": pick.measured,
                               "next": pick.against, "sure": pick.sure})
        table.notes += self.summary
        if len(self.frontier) > 1:
            steps = " → ".join(f"{c.name} ({format_ns(c.value('time'))}, {format_bytes(c.size)})"
                               for c in self.frontier)
            table.notes.append(f"trade-off, fastest to smallest (none of these is beaten on both): {steps}")
        elif len(self.frontier) == 1:
            table.notes.append(f"no trade-off: {self.frontier[0].name} is both the fastest and the smallest")
        table.notes += self.lines
        return table

    def to_json(self) -> dict[str, Any]:
        """The answer's numbers for machines: values in ns and bytes, ties and margins as they are."""
        def candidate(c: Candidate) -> dict[str, Any]:
            return {"name": c.name, "time_ns": None if c.time is None else c.time.median,
                    "time_ci_low_ns": None if c.time is None else c.time.ci_low,
                    "time_ci_high_ns": None if c.time is None else c.time.ci_high,
                    "time_ci_level": None if c.time is None else c.time.ci_level,
                    "size_bytes": c.size, "memory_bytes": c.memory}

        return {
            "suite": self.suite, "question": self.question,
            "bests": [{"aspect": b.aspect, "label": b.label, "tie": b.tie,
                       "winners": [candidate(c) for c in b.winners],
                       "runner_up": None if b.runner_up is None else candidate(b.runner_up),
                       "margin_ratio": b.margin} for b in self.bests],
            "frontier": [candidate(c) for c in self.frontier],
            "picks": [pick.to_json() for pick in self.picks],
            "summary": self.summary,
            "lines": self.lines,
        }


def best_of(aspect: Aspect, label: str, candidates: Sequence[Candidate]) -> Best | None:
    """The best candidate on ``aspect`` with every candidate tied with it, or ``None`` if none measures it."""
    measured = sorted((c for c in candidates if c.value(aspect) is not None), key=lambda c: c.value(aspect) or 0.0)
    if not measured:
        return None
    winner = measured[0]
    same: Callable[[Candidate], bool]
    if aspect == "time":
        assert winner.time is not None
        time = winner.time
        same = lambda c: c.time is not None and c.time.overlaps(time)  # noqa: E731
    else:
        limit = (winner.value(aspect) or 0) * (1 + _CLOSE)
        same = lambda c: (c.value(aspect) or 0) <= limit  # noqa: E731
    winners = tuple([winner] + [c for c in measured[1:] if same(c)])
    rest = [c for c in measured[1:] if c not in winners]
    return Best(aspect, label, winners, rest[0] if rest else None,
                winner.time.ci_level if aspect == "time" and winner.time else None)


def frontier(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The candidates no other beats on both time and size, fastest first."""
    both = [c for c in candidates if c.time is not None and c.size is not None]
    kept: list[Candidate] = []
    for c in sorted(both, key=lambda c: (c.value("time"), c.size)):
        if not kept or (c.size or 0) < (kept[-1].size or 0):
            kept.append(c)
    return kept


def answer(suite: str, question: str, candidates: Sequence[Candidate], *, time: str = "fastest",
           size: str = "smallest", memory: str = "least memory", lines: Sequence[str] = ()) -> Answer:
    """The best on every aspect the candidates measure, and the time-vs-size frontier.

    Parameters
    ----------
    time, size, memory
        What "best" means on each aspect, for the reader.
    lines
        Sentences the reader needs beside the answer.
    """
    result = Answer(suite, question, lines=list(lines))
    for aspect, label in (("time", time), ("size", size), ("memory", memory)):
        best = best_of(aspect, label, candidates)  # type: ignore[arg-type]
        if best is not None:
            result.bests.append(best)
    result.frontier = frontier(candidates)
    return result
