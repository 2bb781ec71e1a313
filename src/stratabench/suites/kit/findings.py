"""The report kit every study declares its findings with: one vocabulary, one rule, two tables.

A study's report says what the study it reproduces claimed, and judges each
claim on this run's results. Every study uses the same pieces:

- :class:`Verdict`, the one vocabulary, each word documented once below;
- :func:`beyond` and :func:`judge`, the one claim rule (a ratio → a verdict), and
  :func:`judge_paired`, the same rule on a ratio with its own interval, which
  also knows when the samples are too few;
- :class:`Finding`, the one shape of a judged claim;
- :class:`ResultIndex`, "the cell with these parameters";
- :func:`findings_table` and :func:`conclusions_table`, the two tables.

Wording. A verdict is printed in the words of the table it sits in: a
reproduced study's findings say *reproduced* / *refuted*
(:data:`REPRODUCTION`), a target says *met* / *missed* (:data:`TARGET`), a
conclusion says *holds* / *does not hold* (the verdict's own words). The
other verdicts read the same everywhere (:data:`READER`): *too close to
call*, *too few to judge*, *not measured*, *not measured: needs a server*, *cannot be checked
today*, *true by design*. The words are a mapping over the one vocabulary, so
the rule that gives a verdict never depends on how it is printed.

Written for a reader who has not read the studies. Every title, claim,
figure and piece of evidence a report prints is read by someone who knows
neither this project's files nor the study it checks, so:

- name the study by its author or title and year (``t-yaegashi/goddbench
  (Go, 2018)``, ``the 2011 App Engine caching article``), never by a word of
  ours for it (no "seed", no section marks, no "probe", no source paths);
- each finding says what was claimed, by whom (the table's title or the
  claim), and what this run saw (``here``); when the run could not measure
  it, ``here`` stays empty and the verdict says why (:func:`findings_table`
  blanks it);
- judge only against a baseline that is a real operation: a ratio against a
  load that does no work (a pointer return, a dict lookup) measures noise,
  so say where the cost went instead, or compare with the nearest real
  alternative;
- units go in the cells (``1.2 ms``), never in a header; one name per
  quantity (``loops``, ``properties``), never a bare ``N``.

``tests/unit/report/test_reader_words.py`` renders every suite's report and
fails on the words this rule forbids.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from stratabench.report.compare import Ratio
from stratabench.report.paired import PairedRatio
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult

__all__ = [
    "READER",
    "REPRODUCTION",
    "TARGET",
    "UNMEASURED",
    "Finding",
    "ResultIndex",
    "Verdict",
    "Words",
    "all_of",
    "beyond",
    "conclusions_table",
    "findings_table",
    "judge",
    "judge_at_most",
    "judge_paired",
    "said",
]


class Verdict(StrEnum):
    """What this run says about one claim. Each word, what it means, and the rule that gives it."""

    HOLDS = "holds"
    """The run shows what the claim says: every ratio it rests on is :func:`beyond` its bound."""

    DOES_NOT_HOLD = "does not hold"
    """The run shows otherwise: a ratio it rests on is measured, clear of noise, and on the wrong side."""

    WITHIN_NOISE = "within noise"
    """The ratio's two confidence intervals overlap (``~``): the data cannot tell the two cells apart."""

    TOO_FEW = "too few samples"
    """The cells have fewer samples than any 95% interval needs: the run cannot judge, whatever it measured;
    the qualifier says how many and what to run."""

    NOT_MEASURED = "not measured"
    """A cell the claim rests on did not run or failed in this run; the evidence says which."""

    NEEDS_SERVER = "needs a server"
    """Like *not measured*, because the run had no server of the kind the claim is about."""

    NOT_REPRODUCIBLE = "not reproducible"
    """The claim is about something that no longer exists, so no run can measure it."""

    BY_CONSTRUCTION = "holds by construction"
    """The claim is about how the code is built, not about a measurement; the evidence says where."""


Words = Mapping[Verdict, str]
"""How a table prints verdicts; a verdict missing from the mapping is printed as its own word."""

READER: Words = {
    Verdict.WITHIN_NOISE: "too close to call",
    Verdict.TOO_FEW: "too few to judge",
    Verdict.NOT_MEASURED: "not measured",
    Verdict.NEEDS_SERVER: "not measured: needs a server",
    Verdict.NOT_REPRODUCIBLE: "cannot be checked today",
    Verdict.BY_CONSTRUCTION: "true by design",
}
"""How every table prints the verdicts that are not a yes or a no; a table's own words come first."""

UNMEASURED = frozenset({Verdict.NOT_MEASURED, Verdict.NEEDS_SERVER, Verdict.NOT_REPRODUCIBLE})
"""Verdicts of a claim this run could not measure: their ``here`` column stays empty."""

REPRODUCTION: Words = {Verdict.HOLDS: "reproduced", Verdict.DOES_NOT_HOLD: "refuted"}
"""The findings of a study we reproduce: *reproduced* or *refuted*."""

TARGET: Words = {Verdict.HOLDS: "met", Verdict.DOES_NOT_HOLD: "missed"}
"""A performance target of our own: *met* or *missed*."""


def beyond(measured: Ratio | None, at_least: float) -> bool:
    """The claim rule: a ratio supports "at least ``at_least``×" when it is surely at or above the bound
    (:meth:`~stratabench.report.compare.Ratio.clear_of`)."""
    return measured is not None and measured.clear_of(at_least) is True


def judge(measured: Ratio | None, at_least: float) -> Verdict:
    """The claim rule as a verdict: *not measured* without a ratio; *holds* when it is surely at or above
    ``at_least``, *does not hold* when surely below; else *within noise* ("too close to call").

    A paired ratio (:func:`~stratabench.report.compare.paired`) is sure when its own interval lies on one
    side of the bound, so a verdict that is not sure says so instead of flipping from run to run; a ratio
    of two medians (a file from before rounds) when the medians' intervals do not overlap.
    """
    if measured is None:
        return Verdict.NOT_MEASURED
    side = measured.clear_of(at_least)
    if side is None:
        return Verdict.WITHIN_NOISE
    return Verdict.HOLDS if side else Verdict.DOES_NOT_HOLD


def judge_at_most(measured: Ratio | None, at_most: float) -> Verdict:
    """:func:`judge`'s mirror for a claim of "at most ``at_most``×": *holds* when surely at or below the bound,
    *does not hold* when surely above; else *within noise* ("too close to call")."""
    verdict = judge(measured, at_most)  # surely above the bound is "at least" holding, so "at most" failing
    return {Verdict.HOLDS: Verdict.DOES_NOT_HOLD, Verdict.DOES_NOT_HOLD: Verdict.HOLDS}.get(verdict, verdict)


def judge_paired(measured: PairedRatio | None, at_least: float) -> Verdict:
    """The claim rule on a ratio with its own interval: *not measured* without one, *too few samples* when
    either side has fewer than a 95% interval needs, *within noise* when the interval holds 1, else *holds*
    when the ratio reaches ``at_least`` and *does not hold* when it does not."""
    if measured is None:
        return Verdict.NOT_MEASURED
    if not measured.enough:
        return Verdict.TOO_FEW
    if measured.low <= 1 <= measured.high:
        return Verdict.WITHIN_NOISE
    return Verdict.HOLDS if measured.value >= at_least else Verdict.DOES_NOT_HOLD


def all_of(*verdicts: Verdict) -> Verdict:
    """A claim made of parts: *holds* when every part holds; *not measured* if a part was not;
    *too few samples* if a part had too few; *does not hold* if a part does not; else *within noise*."""
    if Verdict.NOT_MEASURED in verdicts:
        return Verdict.NOT_MEASURED
    if Verdict.TOO_FEW in verdicts:
        return Verdict.TOO_FEW
    if all(v is Verdict.HOLDS for v in verdicts):
        return Verdict.HOLDS
    if Verdict.DOES_NOT_HOLD in verdicts:
        return Verdict.DOES_NOT_HOLD
    return Verdict.WITHIN_NOISE


@dataclass(frozen=True)
class Finding:
    """One claim, judged on this run.

    Attributes
    ----------
    id
        How the report numbers it (``F1``, ``3``); conclusions are numbered by their order.
    claim
        What the study claimed, in a few words.
    judged
        The :class:`Verdict`.
    here
        What this run measured, in the claim's terms.
    published
        The study's own figure.
    probe
        What the feasibility probe measured, where there was one.
    evidence
        The ratios and times behind the verdict.
    words
        How the verdict is printed (:data:`REPRODUCTION` for a study's findings).
    qualifier
        A word in brackets after the verdict (``build failed``).
    """

    id: str
    claim: str
    judged: Verdict
    here: str = "-"
    published: str = "-"
    probe: str = "-"
    evidence: str = ""
    words: Words = field(default_factory=lambda: REPRODUCTION)
    qualifier: str = ""

    @property
    def verdict(self) -> str:
        """The verdict as the report prints it."""
        return said(self.judged, self.words, self.qualifier)


def said(verdict: Verdict, words: Words, qualifier: str = "") -> str:
    """``verdict`` in a table's ``words``, with ``qualifier`` in brackets after it when given."""
    word = words.get(verdict) or READER.get(verdict, verdict.value)
    return f"{word} ({qualifier})" if qualifier else word


class ResultIndex:
    """A study's results found by their parameters: "the cell with these parameters".

    Parameters
    ----------
    results
        Every result of the run; only those of ``suite`` are kept.
    suite
        The study's suite name.
    keys
        The parameters that tell the study's cells apart.
    missing
        The value of a key a cell does not have (``None`` unless given per key).
    """

    def __init__(self, results: Iterable[CellResult], suite: str, keys: Sequence[str],
                 missing: Mapping[str, Any] | None = None) -> None:
        self.results = [r for r in results if r.suite == suite]
        self.keys = tuple(keys)
        self._missing = dict(missing or {})
        self._by: dict[tuple[Any, ...], CellResult] = {}
        for result in self.results:
            self._by[self._key(result.params)] = result

    def _key(self, params: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(params.get(key, self._missing.get(key)) for key in self.keys)

    def find(self, **params: Any) -> CellResult | None:
        """The cell with these parameters (a key not given counts as missing), or ``None``."""
        return self._by.get(self._key(params))

    def find_ok(self, **params: Any) -> CellResult | None:
        """The cell with these parameters if it ran and verified, else ``None``."""
        result = self.find(**params)
        return result if result is not None and result.ok else None


def findings_table(title: str, found: Sequence[Finding], headers: Mapping[str, str], *,
                   notes: Iterable[str] = (), evidence_notes: bool = False,
                   keys: Mapping[str, str] | None = None) -> Table:
    """The table of a study's findings: one row per finding.

    Parameters
    ----------
    headers
        The columns to show, each with its header, among ``id``, ``claim``,
        ``published``, ``probe``, ``here`` and ``verdict``, in that order.
    notes
        Lines under the table (what the words mean for this study's bounds).
    evidence_notes
        Whether each finding's evidence is a line under the table, before ``notes``.
    keys
        A column key other than the field's name, by field (``{"published": "article"}``).
    """
    order = [name for name in ("id", "claim", "published", "probe", "here", "verdict") if name in headers]
    key = {name: (keys or {}).get(name, name) for name in order}
    table = Table(title, [Column(key[name], headers[name]) for name in order])
    for finding in found:
        here = "" if finding.judged in UNMEASURED else finding.here
        values = {"id": finding.id, "claim": finding.claim, "published": finding.published, "probe": finding.probe,
                  "here": here, "verdict": finding.verdict}
        table.rows.append({key[name]: values[name] for name in order})
    table.notes = [f"{f.id}: {f.evidence}" for f in found] if evidence_notes else []
    table.notes += list(notes)
    return table


def conclusions_table(title: str, found: Sequence[Finding], *, notes: Iterable[str] = ()) -> Table:
    """The table of a study's conclusions, numbered in order, each with its verdict and evidence."""
    table = Table(title, [Column("n", "#", "right"), Column("conclusion", "conclusion"), Column("verdict", "verdict"),
                          Column("evidence", "evidence")])
    table.rows = [{"n": n, "conclusion": f.claim, "verdict": f.verdict, "evidence": f.evidence}
                  for n, f in enumerate(found, 1)]
    table.notes = list(notes)
    return table
