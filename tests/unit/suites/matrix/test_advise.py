"""advise chooses by the goal: the cheapest that meets the limits, too close to call when it cannot tell,
and a refusal with the closest candidate and its gap when none meets them."""

from __future__ import annotations

from stratabench.results.records import CellResult, MetricResult
from stratabench.suites.matrix.advise import Advice, Option, advice_answer, advice_chart, advice_report, choose
from stratabench.suites.matrix.advise import shortlist
from stratabench.suites.matrix.goals import Cost, Goal, Limit, Prices, parse_goal


def _cell(name: str, operation: str, **medians: list[float]) -> CellResult:
    codec, compression = name.split("+")
    return CellResult("matrix", f"{operation} memory {name}", {"codec": codec, "compression": compression,
                                                                "operation": operation, "store": "memory"},
                      "python", "ok", metrics={k: MetricResult.of(v) for k, v in medians.items()})


def _load(p50_ns: float, p99s: list[float]) -> CellResult:
    return CellResult("advise", "get/c2/closed", {}, "python", "ok",
                      metrics={"latency_ns": MetricResult.of(p99s)},
                      notes={"latency": {"p50_ns": p50_ns, "p99_ns": sorted(p99s)[len(p99s) // 2]}})


def _option(name: str, cost: float, p99_ns: float | None, stored: float = 1e6, spread: float = 0.0,
            p99s: list[float] | None = None) -> Option:
    decode = _cell(name, "get_one", wall_ns=[0.0] * 6)
    read = _cell(name, "get_one", wall_ns=[1000.0] * 6, size_bytes=[stored])
    load = None if p99_ns is None else _load(p99_ns / 2, p99s or [p99_ns] * 6)
    return Option(*name.split("+"), "redis", "", decode, read, None,
                  Cost(0.0, None, cost * 1e9 / 0.01, stored, Prices(wire_gb=0.01)), (cost - spread, cost + spread),
                  load)


def test_the_cheapest_that_meets_the_limits_wins() -> None:
    options = [_option("json+none", 3.0, 1e6), _option("msgpack+zstd", 1.0, 9e6), _option("orjson+none", 2.0, 2e6)]
    chosen, runner, sure, closest = choose(options, parse_goal("p99<5ms"))
    assert chosen is not None and chosen.codec == "orjson" and runner is not None and runner.codec == "json"
    assert sure == "clear" and closest is None


def test_fastest_picks_the_lowest_p99() -> None:
    options = [_option("json+none", 3.0, 1e6, p99s=[1e6] * 6), _option("orjson+none", 2.0, 2e6, p99s=[2e6] * 6)]
    chosen, _, sure, _ = choose(options, Goal(objective="fastest"))
    assert chosen is not None and chosen.codec == "json" and sure == "clear"


def test_overlapping_costs_are_too_close_to_call() -> None:
    options = [_option("json+none", 2.0, 1e6, spread=0.5), _option("orjson+none", 2.2, 1e6, spread=0.5)]
    chosen, runner, sure, _ = choose(options, Goal())
    assert chosen is not None and runner is not None and sure.startswith("too close to call")
    answer = advice_answer(Advice(Goal(), Prices(), 10, "f", options, chosen, runner, sure))
    assert "too close to call" in " ".join(answer.summary)


def test_a_goal_none_meets_is_refused_with_the_closest_and_its_gap() -> None:
    options = [_option("json+none", 1.0, 9e6), _option("orjson+none", 1.0, 7e6), _option("pickle+none", 1.0, None)]
    goal = parse_goal("p99<5ms")
    chosen, runner, _, closest = choose(options, goal)
    assert chosen is None and runner is None and closest is not None and closest.codec == "orjson"
    advice = Advice(goal, Prices(), 10, "f", options, None, None, "no candidate meets the goal", closest)
    answer = advice_answer(advice)
    (pick,) = answer.picks
    assert pick.choice.startswith("refused") and "orjson on redis" in pick.against
    assert pick.sure == "p99<5.00 ms (has 7.00 ms: 2.00 ms over, 1.40× the limit)"


def test_an_unloaded_candidate_never_meets_a_latency_limit() -> None:
    chosen, _, _, closest = choose([_option("json+none", 0.1, None)], parse_goal("p99<1s"))
    assert chosen is None and closest is not None
    assert _option("json+none", 0.1, None).gap(Limit("p99", 1e9)) == float("inf")


def test_the_shortlist_spans_the_time_size_frontier() -> None:
    screened = [_cell("a+none", "get_one", wall_ns=[1.0], size_bytes=[100.0]),
                _cell("b+none", "get_one", wall_ns=[2.0], size_bytes=[80.0]),
                _cell("c+none", "get_one", wall_ns=[3.0], size_bytes=[90.0]),  # beaten on both by b
                _cell("d+zstd", "get_one", wall_ns=[4.0], size_bytes=[60.0]),
                _cell("e+zstd", "get_one", wall_ns=[5.0], size_bytes=[50.0])]
    assert shortlist(screened, 3) == [("a", "none"), ("d", "zstd"), ("e", "zstd")]
    assert shortlist(screened, 5) == [("a", "none"), ("b", "none"), ("d", "zstd"), ("e", "zstd")]


def test_the_chart_marks_the_recommended_candidate() -> None:
    options = [_option("json+none", 3.0, 1e6), _option("orjson+none", 2.0, 2e6), _option("pickle+none", 1.0, None)]
    chosen, runner, sure, _ = choose(options, parse_goal("p99<5ms"))
    chart = advice_chart(Advice(parse_goal("p99<5ms"), Prices(), 10, "f", options, chosen, runner, sure))
    assert chart is not None and chart.marks.get("marked") == 1 and chart.marks.get("point") == 3
    assert "recommended: orjson on redis" in chart.caption


def test_the_page_shows_the_answer_then_the_chart_then_the_candidates() -> None:
    from stratabench.report.formats.html import HtmlReporter

    options = [_option("json+none", 3.0, 1e6), _option("orjson+none", 2.0, 2e6), _option("pickle+none", 1.0, None)]
    goal = parse_goal("p99<5ms")
    chosen, runner, sure, _ = choose(options, goal)
    page = HtmlReporter().render_report(advice_report(Advice(goal, Prices(), 10, "f", options, chosen, runner, sure),
                                                      {"run_id": "advise"}))
    page = page[page.index("<main>"):]  # past the contents, which name every part
    answer, chart, table = (page.index("advise: the answer"), page.index('id="advise-candidates"'),
                            page.index("advise: every candidate"))
    assert answer < chart < table
    assert 'data-marked="1"' in page and "recommended: orjson on redis" in page
