"""advise chooses by the goal: the cheapest that meets the limits, too close to call when it cannot tell,
and a refusal with the closest candidate and its gap when none meets them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from stratabench.results.records import CellResult, MetricResult
from stratabench.suites.matrix.advise import Advice, Option, advice_answer, advice_chart, advice_report, choose
from stratabench.suites.matrix.advise import cost_ratio, round_costs, shortlist, tier_choice, tiered
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
            p99s: list[float] | None = None, cpu_ns: list[float] | None = None, store: str = "redis") -> Option:
    """A candidate on ``store`` (redis) whose cost per million reads is ``cost`` dollars of wire plus, in each of its
    single-read cell's rounds, ``cpu_ns`` (default none) at a dollar per microsecond of CPU."""
    decode = _cell(name, "get_one", wall_ns=[0.0] * 6)
    cpu = cpu_ns or [0.0] * 6
    rounds = list(range(len(cpu)))
    codec, compression = name.split("+")
    read = CellResult("matrix", f"get_one {store} {name}", {"codec": codec, "compression": compression,
                                                             "operation": "get_one", "store": store, "kind": store},
                      "python", "ok",
                      metrics={"wall_ns": MetricResult.of([1000.0] * len(cpu), rounds),
                               "cpu_ns": MetricResult.of(cpu, rounds), "size_bytes": MetricResult.of([stored])})
    load = None if p99_ns is None else _load(p99_ns / 2, p99s or [p99_ns] * 6)
    median_cpu = sorted(cpu)[len(cpu) // 2]
    prices = Prices(cpu_hour=3600.0, wire_gb=0.01)
    return Option(codec, compression, store, "", decode, read, None,
                  Cost(median_cpu / 1000, None, cost * 1e9 / 0.01, stored, prices), (cost - spread, cost + spread),
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


def test_costs_whose_paired_interval_straddles_one_are_too_close_to_call() -> None:
    # Round by round, each is the cheaper in turn: the median ratio's interval holds 1.
    options = [_option("json+none", 2.0, 1e6, cpu_ns=[100.0, 900.0, 100.0, 900.0, 100.0, 900.0, 500.0]),
               _option("orjson+none", 2.0, 1e6, cpu_ns=[900.0, 100.0, 900.0, 100.0, 900.0, 100.0, 510.0])]
    chosen, runner, sure, _ = choose(options, Goal())
    assert chosen is not None and chosen.codec == "json" and runner is not None
    assert sure.startswith("too close to call: orjson on redis has 1.00×"), sure
    answer = advice_answer(Advice(Goal(), Prices(), 10, "f", options, chosen, runner, sure))
    assert answer.summary[0].startswith("Use (too close to call) json on redis")
    assert answer.summary[1] == "Too close to call between json on redis and orjson on redis; both have " \
                                "the store redis and the compressor none: that much is sure."
    (pick, _) = answer.picks
    assert pick.ratio is not None and pick.ratio.paired and pick.ratio.low < 1 < pick.ratio.high
    assert pick.compared == ((runner.read, chosen.read),)


def test_a_sure_difference_under_five_percent_is_too_close_to_call_and_over_it_clear() -> None:
    # Every round 3% dearer: the interval leaves out 1, but two runs could still choose either.
    near = [_option("json+none", 2.06, 1e6, cpu_ns=[10.0] * 6), _option("orjson+none", 2.0, 1e6, cpu_ns=[10.0] * 6)]
    chosen, _, sure, _ = choose(near, Goal())
    assert chosen is not None and chosen.codec == "orjson" and sure.startswith("too close to call"), sure
    far = [_option("json+none", 2.2, 1e6, cpu_ns=[10.0] * 6), _option("orjson+none", 2.0, 1e6, cpu_ns=[10.0] * 6)]
    assert choose(far, Goal())[2] == "clear"


def test_a_runner_up_measured_in_other_rounds_is_not_called_clear() -> None:
    chosen, runner = _option("orjson+none", 1.0, 1e6), _option("json+none", 3.0, 1e6)
    runner = replace(runner, read=replace(runner.read, metrics={"cpu_ns": MetricResult.of([1.0] * 6)}))
    assert choose([chosen, runner], Goal())[2] == "too close to call: json on redis's cost per million reads was " \
                                                  "not measured beside it"


def test_round_costs_price_each_rounds_cpu_and_the_wire() -> None:
    option = _option("json+none", 0.5, None, cpu_ns=[1000.0, 2000.0, 1000.0, 3000.0])
    # A microsecond of CPU a read is a million CPU seconds per million reads: $1 at $3,600 an hour.
    assert round_costs(option) == {0: 1.5, 1: 2.5, 2: 1.5, 3: 3.5}
    ratio = cost_ratio(_option("json+none", 0.5, None, cpu_ns=[3000.0] * 4), option)
    assert ratio is not None and ratio.paired and ratio.n == 4 and ratio.value == (3.5 / 1.5 + 3.5 / 2.5) / 2


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


def test_a_cache_tier_costs_hits_at_the_tier_and_misses_at_both_by_hand() -> None:
    # At $3,600 a vCPU-hour a microsecond of CPU a read is $1 per million reads (see round_costs), no wire:
    # the memory tier $0.10 a round, the database $1.00. At 90% hits: 0.9 × 0.10 + 0.1 × (0.10 + 1.00) = $0.20.
    assert tiered(0.9, tier=0.1, miss=0.1, store=1.0) == pytest.approx(0.2)
    tier = _option("json+none", 0.0, None, cpu_ns=[100.0] * 6, store="memory")
    store = _option("json+none", 0.0, None, cpu_ns=[1000.0] * 6, store="postgresql")
    weighed = tier_choice(tier, store, 0.9, Goal())
    assert weighed.cost == pytest.approx(0.2)
    ratio = weighed.ratio
    assert ratio is not None and ratio.paired and ratio.n == 6 and ratio.value == pytest.approx(0.2)
    assert weighed.sure == "clear" and weighed.helps and weighed.decision == "put memory in front of postgresql"
    # At 10% hits a tier as dear as the store only adds its misses: 0.1 × 1 + 0.9 × (1 + 1) = 1.9× the store alone.
    dear = tier_choice(_option("json+none", 0.0, None, cpu_ns=[1000.0] * 6, store="memory"), store, 0.1, Goal())
    assert dear.ratio is not None and dear.ratio.value == pytest.approx(1.9)
    assert not dear.helps and dear.decision == "no memory tier: postgresql alone"


def test_a_tier_within_five_percent_is_too_close_to_call_and_the_answer_states_the_hit_ratio() -> None:
    store = _option("json+none", 0.0, None, cpu_ns=[1000.0] * 6, store="postgresql")
    # Every read a hit on a tier 2% cheaper than the store: sure, but under the 5% a choice needs.
    near = tier_choice(_option("json+none", 0.0, None, cpu_ns=[980.0] * 6, store="memory"), store, 1.0, Goal())
    assert near.ratio is not None and near.ratio.value == pytest.approx(0.98)
    assert near.sure == "too close to call" and near.decision == "memory in front or not: too close to call"
    weighed = tier_choice(_option("json+none", 0.0, None, cpu_ns=[100.0] * 6, store="memory"), store, 0.9, Goal())
    advice = Advice(Goal(), Prices(), 10, "f", [store], store, None, "the only candidate that meets the goal",
                    tiers=[weighed])
    answer = advice_answer(advice)
    pick = answer.picks[-1]
    assert pick.setting == "cache tier in front of json on postgresql at 90% hits"
    assert pick.choice == "put memory in front of postgresql" and pick.ratio is weighed.ratio
    assert pick.compared == ((weighed.tier.read, store.read),)
    assert any(line.startswith("Cache tier: put memory in front of postgresql: 0.200× [") for line in answer.summary)
    assert any(line.startswith("A cache tier assumes 90% of reads hit it") for line in answer.lines)


@pytest.mark.parametrize("form", ["terminal", "markdown", "html"])
def test_every_format_shows_the_tier_decision_and_its_hit_ratio(form: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from stratabench.report.formats import REPORTERS

    monkeypatch.setenv("COLUMNS", "400")  # the terminal's tables fit it; the text is checked whatever the wrapping

    store = _option("json+none", 0.0, None, cpu_ns=[1000.0] * 6, store="postgresql")
    weighed = tier_choice(_option("json+none", 0.0, None, cpu_ns=[100.0] * 6, store="memory"), store, 0.9, Goal())
    advice = Advice(Goal(), Prices(), 10, "f", [store], store, None, "the only candidate that meets the goal",
                    tiers=[weighed])
    page = " ".join(REPORTERS.get(form)().render_report(advice_report(advice, {"run_id": "advise"})).split())
    assert "put memory in front of postgresql" in page and "0.200×" in page and "90% of reads hit it" in page


def test_a_cache_server_is_weighed_in_front_of_a_database_and_memory_in_front_of_any_store() -> None:
    from stratabench.suites.matrix.advise import AdviseOptions, _tier_choices

    def tiers(*stores: str) -> list[Option]:
        return [_option("json+none", 0.0, None, cpu_ns=[100.0] * 6, store=store) for store in stores]

    options = AdviseOptions(data="f", tiers=("memory", "redis"))
    database = _option("json+none", 0.0, None, cpu_ns=[1000.0] * 6, store="postgresql")
    assert [w.tier.store for w in _tier_choices(database, tiers("redis", "memory"), options)] == ["memory", "redis"]
    cache = _option("json+none", 0.0, None, cpu_ns=[1000.0] * 6, store="memcached")
    assert [w.tier.store for w in _tier_choices(cache, tiers("redis", "memory"), options)] == ["memory"]
    # Only the recommended codec × compressor is weighed: a tier holding other bytes answers another question.
    other = [_option("pickle+none", 0.0, None, cpu_ns=[100.0] * 6, store="memory")]
    assert _tier_choices(database, other, options) == []
