"""The report kit: one claim rule, one vocabulary printed in each table's words, one result index."""

from __future__ import annotations

from stratabench.engine.operation import CellSpec
from stratabench.report.compare import Ratio
from stratabench.results.records import CellResult
from stratabench.suites.kit.findings import (
    REPRODUCTION,
    TARGET,
    Finding,
    ResultIndex,
    Verdict,
    all_of,
    beyond,
    conclusions_table,
    findings_table,
    judge,
    judge_at_most,
)


def test_the_claim_rule_needs_the_bound_and_no_overlap() -> None:
    assert beyond(Ratio(3.0, False), 2) and not beyond(Ratio(3.0, True), 2) and not beyond(Ratio(1.5, False), 2)
    assert not beyond(None, 1)
    assert judge(None, 2) is Verdict.NOT_MEASURED
    assert judge(Ratio(3.0, True), 2) is Verdict.WITHIN_NOISE
    assert judge(Ratio(3.0, False), 2) is Verdict.HOLDS and judge(Ratio(1.5, False), 2) is Verdict.DOES_NOT_HOLD


def test_parts_of_a_claim_combine() -> None:
    assert all_of(Verdict.HOLDS, Verdict.HOLDS) is Verdict.HOLDS
    assert all_of(Verdict.HOLDS, Verdict.NOT_MEASURED) is Verdict.NOT_MEASURED
    assert all_of(Verdict.WITHIN_NOISE, Verdict.DOES_NOT_HOLD) is Verdict.DOES_NOT_HOLD
    assert all_of(Verdict.HOLDS, Verdict.WITHIN_NOISE) is Verdict.WITHIN_NOISE


def test_each_table_prints_the_one_vocabulary_in_its_words() -> None:
    assert Finding("F1", "c", Verdict.HOLDS).verdict == "reproduced"
    assert Finding("F1", "c", Verdict.DOES_NOT_HOLD, words=TARGET).verdict == "missed"
    assert Finding("1", "c", Verdict.DOES_NOT_HOLD, words={}).verdict == "does not hold"
    assert Finding("1", "c", Verdict.HOLDS, qualifier="build failed").verdict == "reproduced (build failed)"
    assert Finding("1", "c", Verdict.NEEDS_SERVER, words=REPRODUCTION).verdict == "not measured: needs a server"


def test_the_index_finds_the_cell_with_these_parameters() -> None:
    def cell(name: str, **params: object) -> CellResult:
        return CellResult.failure(CellSpec("study", name, params), "failed", "x")

    index = ResultIndex([cell("a", op="get", backend="upb"), cell("b", op="get"), cell("c", op="put")], "study",
                        ("op", "backend"), missing={"backend": "upb"})
    found = index.find(op="put")
    assert found is not None and found.cell == "c"
    assert index.find(op="delete") is None and index.find_ok(op="put") is None
    assert ResultIndex([cell("a", op="get")], "other", ("op",)).find(op="get") is None


def test_the_two_tables_number_and_word_their_rows() -> None:
    found = [Finding("F1", "fast", Verdict.HOLDS, here="2×", published="3×", evidence="because")]
    table = findings_table("t", found, {"id": "id", "published": "then", "verdict": "verdict"},
                           keys={"published": "article"}, evidence_notes=True, notes=["rule"])
    assert [c.key for c in table.columns] == ["id", "article", "verdict"]
    assert table.rows == [{"id": "F1", "article": "3×", "verdict": "reproduced"}]
    assert table.notes == ["F1: because", "rule"]
    conclusions = conclusions_table("c", [Finding("", "a", Verdict.HOLDS, words={}), Finding("", "b", Verdict.BY_CONSTRUCTION)])
    assert [(r["n"], r["verdict"]) for r in conclusions.rows] == [(1, "holds"), (2, "true by design")]


def test_a_paired_ratio_decides_a_claim_only_when_its_interval_clears_the_bound() -> None:
    from stratabench.report.compare import paired
    from stratabench.results.records import MetricResult

    def cell(name: str, per_round: list[float]) -> CellResult:
        return CellResult("s", name, {}, "python", "ok",
                          metrics={"wall_ns": MetricResult.of(per_round, list(range(len(per_round))))})

    # The machine's speed swings 0.7x to 1.5x from round to round; the two cells move together.
    speed = [1.0, 1.5, 0.7, 1.3, 0.8, 1.4, 0.9, 1.2]
    slow = cell("slow", [300 * s * (1 + 0.01 * (i % 3)) for i, s in enumerate(speed)])
    fast = cell("fast", [100 * s for s in speed])
    measured = paired(slow, fast)
    assert measured is not None and measured.low is not None and 2.9 < measured.value < 3.1
    assert judge(measured, 2.0) is Verdict.HOLDS and judge(measured, 4.0) is Verdict.DOES_NOT_HOLD
    assert judge(measured, 3.01) is Verdict.WITHIN_NOISE  # the bound inside the interval: too close to call
    # "At most" is the mirror: surely below the bound holds, surely above does not, across it too close to call.
    assert judge_at_most(measured, 4.0) is Verdict.HOLDS and judge_at_most(measured, 2.0) is Verdict.DOES_NOT_HOLD
    assert judge_at_most(measured, 3.01) is Verdict.WITHIN_NOISE and judge_at_most(None, 2.0) is Verdict.NOT_MEASURED
    # Too few pairs: never a call, whatever the ratio.
    short = paired(cell("a", [300.0, 310, 305]), cell("b", [100.0, 100, 100]))
    assert short is not None and judge(short, 2.0) is Verdict.WITHIN_NOISE
    # A file from before rounds: the ratio of medians and the overlap rule, as before.
    old = paired(CellResult("s", "a", {}, "python", "ok", metrics={"wall_ns": MetricResult.of([300.0, 301, 302])}),
                 CellResult("s", "b", {}, "python", "ok", metrics={"wall_ns": MetricResult.of([100.0, 101, 102])}))
    assert old is not None and old.low is None and judge(old, 2.0) is Verdict.HOLDS
