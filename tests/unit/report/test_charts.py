"""The charts of a suite: which are drawn, what they mark, and SVG that is stable and shares a page."""

from __future__ import annotations

import re
from typing import Any

from stratabench.report.charts import ChartPlan, bands, pareto_frontier, suite_charts
from stratabench.results.records import CellResult, MetricResult


def _cell(name: str, wall: float | None, size_bytes: float | None = None, status: str = "ok",
          **params: Any) -> CellResult:
    metrics = {}
    if wall is not None:
        metrics["wall_ns"] = MetricResult.of([wall * 0.95, wall, wall * 1.1, wall, wall * 1.02])
    if size_bytes is not None:
        metrics["size_bytes"] = MetricResult.of([size_bytes])
    return CellResult("demo", name, {"codec": name, **params}, "python", status,  # type: ignore[arg-type]
                      None if status == "ok" else "broken", 10, metrics)


def _marks(svg: str, chart: str, kind: str) -> int:
    return len(re.findall(rf'<g id="{chart}-mark-{kind}-\d+"', svg))


def test_the_pareto_frontier_keeps_what_nothing_beats_on_both() -> None:
    points = [(1.0, 9.0), (2.0, 5.0), (3.0, 6.0), (4.0, 1.0), (5.0, 1.0), (2.5, 5.0)]
    assert pareto_frontier(points) == [0, 1, 3]


def test_bands_cut_where_a_value_outgrows_its_band() -> None:
    assert bands([5.0, 1.0, 29.0, 31.0, 900.0], ratio=30) == [[1, 0, 2], [3, 4]]
    assert bands([1.0, 2.0, 3.0]) == [[0, 1, 2]]


def test_time_and_size_give_a_tradeoff_and_bars_on_one_linear_axis() -> None:
    cells = [_cell("a", 100.0, 900.0), _cell("b", 200.0, 300.0), _cell("c", 300.0, 600.0),
             _cell("d", 150.0, 1000.0, "failed"), _cell("e", None, None, "failed"),
             _cell("f", None, None, "unavailable")]
    tradeoff, time = suite_charts("demo", cells)
    assert tradeoff.id == "demo-tradeoff" and time.id == "demo-time-per-operation"
    assert tradeoff.marks == {"point": 4, "failed": 1, "frontier": 2}  # a and b; c is beaten by b
    assert _marks(tradeoff.svg, tradeoff.id, "point") == 4 and _marks(tradeoff.svg, tradeoff.id, "frontier") == 2
    assert "fastest first: 1 a, 2 b." in tradeoff.caption and "2 cells without these measurements left out" in tradeoff.caption
    assert time.marks == {"bar": 4, "whisker": 4, "failed": 2}  # e failed before measuring: marked, no bar
    assert _marks(time.svg, time.id, "bar") == 4 and _marks(time.svg, time.id, "failed") == 2
    assert "Axis broken" not in time.svg and "1 cell without these measurements left out" in time.caption


def test_medians_orders_of_magnitude_apart_break_the_axis_and_say_so() -> None:
    cells = [_cell("pointer", 0.7), _cell("decode", 2e6), _cell("parse", 3e6)]
    (time,) = suite_charts("demo", cells)
    assert "Axis broken: medians span 4,285,714×" in time.svg
    assert "band 1 of 2: 0.700 ns, linear from zero" in time.svg
    assert "band 2 of 2: 2.00 ms to 3.00 ms, linear from zero" in time.svg
    assert time.marks["bar"] == 3


def test_a_swept_size_gives_a_growth_plot_and_the_rest_compares_the_largest() -> None:
    cells = [_cell(name, wall * size, wall * size * 10, size=size)
             for name, wall in (("json", 3.0), ("pickle", 1.0)) for size in (100, 1000, 100000)]
    cells.append(_cell("once", 5.0, 50.0, size=100))
    tradeoff, growth, time = suite_charts("demo", cells)
    assert growth.id == "demo-growth" and growth.marks == {"line": 2, "point": 6}
    assert '<g id="demo-growth-mark-line-0">' in growth.svg and "size (log scale)" in growth.svg
    assert tradeoff.marks["point"] == 3 and time.marks["bar"] == 3  # json, pickle at 100000, and once
    assert "largest size of each cell" in time.title


def test_a_study_can_sweep_another_parameter_and_group_its_bars() -> None:
    cells = [_cell(f"get {width}", width * 10.0, family=family, n_props=width, codec="x")
             for family in ("get", "put") for width in (10, 100)]
    charts = suite_charts("demo", cells, ChartPlan(sweep="n_props", group="family"))
    assert [chart.id for chart in charts] == ["demo-growth", "demo-get-time-per-operation",
                                              "demo-put-time-per-operation"]
    assert charts[0].marks["line"] == 2 and charts[1].marks["bar"] == 1


def test_a_study_can_ask_for_a_growth_plot_per_group() -> None:
    cells = [_cell(f"{backend}/{n}/{test}", n * 1e3 * (2 if backend == "json-file" else 1), backend=backend, n=n,
                   test=test, family="reads" if test < 3 else "writes", codec="x")
             for backend in ("json-file", "sqlite") for n in (1000, 10000, 100000) for test in (1, 2, 3)]
    charts = suite_charts("tree", cells, ChartPlan(sweep="n", group="family", growth_by_group=True))
    growth = [chart for chart in charts if chart.id.endswith("-growth")]
    assert [chart.id for chart in growth] == ["tree-reads-growth", "tree-writes-growth"]
    assert growth[0].marks == {"line": 4, "point": 12} and growth[1].marks == {"line": 2, "point": 6}
    assert growth[0].title == "tree reads: growth with n" and "json-file 2" in growth[0].svg


def test_the_svg_is_stable_and_its_ids_are_its_own() -> None:
    cells = [_cell("a", 100.0, 900.0), _cell("b", 200.0, 300.0)]
    first, again = suite_charts("demo", cells), suite_charts("demo", cells)
    assert [c.svg for c in first] == [c.svg for c in again]
    for chart in first:
        assert chart.svg.startswith("<svg") and "<metadata>" not in chart.svg and "<text" in chart.svg
        ids = re.findall(r'\bid="([^"]+)"', chart.svg)
        assert ids and all(i.startswith(chart.id + "-") for i in ids)
        references = re.findall(r'(?:url\(#|href="#)([^)"]+)', chart.svg)
        assert set(references) <= set(ids)


def test_the_machine_s_speed_is_stated_in_the_provenance_and_plotted_round_by_round() -> None:
    from stratabench.report.charts import machine_chart
    from stratabench.report.provenance import provenance, reference_ratios

    env = {"reference_ns": [1.0e6, 0.81e6, 1.37e6, 1.0e6, 1.1e6], "reference_at_s": [1.0, 2.0, 3.0, 4.0, 5.0],
           "steal_s_start": 2.5, "steal_s_end": 3.0, "run_queue_wait_s_start": 0.1, "run_queue_wait_s_end": 0.35}
    facts = dict(provenance({"environment": env}))
    assert facts["machine speed"].startswith("the reference workload ranged 0.81–1.37× its median over 5 rounds")
    assert facts["CPU taken away"] == ("steal 2.50 s at the start, 3.00 s at the end (+0.50 s during the run, every "
                                       "CPU); run-queue wait of the run's process +0.25 s")
    chart = machine_chart(reference_ratios(env))
    assert chart is not None and chart.marks["point"] == 5 and "<svg" in chart.svg
    assert machine_chart(reference_ratios({})) is None and "machine speed" not in dict(provenance({"environment": {}}))


def test_the_machine_s_speed_is_each_round_s_median_of_the_probes_beside_the_samples() -> None:
    from stratabench.report.charts import machine_chart
    from stratabench.report.provenance import probe_ratios, provenance
    from stratabench.results.records import CellResult, MetricResult

    def cell(name: str, rounds: list[int], probe_ns: tuple[float, ...]) -> CellResult:
        return CellResult("s", name, {}, "python", "ok", probe_ns=probe_ns,
                          metrics={"wall_ns": MetricResult.of([1.0] * len(rounds), rounds)})

    # Round 1's probes read slow all through it; the snapshot after round 1 caught a slow spell the probes did not.
    results = [cell("a", [0, 0, 1, 1, 2], (100.0, 100.0, 120.0, 118.0, 99.0)),
               cell("b", [0, 1, 1, 2, 2], (102.0, 119.0, 121.0, 100.0, 101.0)),
               cell("c", [0, 1, 2], (500.0, 500.0))]  # probes not one for one with its samples: left out
    env = {"reference_ns": [1.0e6, 1.0e6, 1.7e6], "reference_at_s": [10.0, 20.0, 30.0]}
    assert [(at, round(ratio, 3)) for at, ratio in probe_ratios(env, results)] == [
        (10.0, 0.985), (20.0, 1.177), (30.0, 0.985)]
    facts = dict(provenance({"environment": env}, results))
    assert facts["machine speed"] == (
        "each round's median of the machine probe timed beside its samples ranged 0.99–1.18× the run's over 3 "
        "rounds (10 probes; above 1: slower); the reference workload, one snapshot of a few ms after each round, "
        "which a short slow spell of the machine can fall on, ranged 1.00–1.70× its median over 3 rounds")
    chart = machine_chart([], probe_ratios(env, results))
    assert chart is not None and chart.marks["line"] == 1 and chart.marks["point"] == 3
    both = machine_chart([(10.0, 1.0), (20.0, 1.0)], probe_ratios(env, results))
    assert both is not None and both.marks["line"] == 2 and both.marks["point"] == 5
    # Without the rounds' times there is no axis to put a round on.
    assert probe_ratios({}, results) == [] and probe_ratios(env, [cell("c", [0, 1, 2], (500.0, 500.0))]) == []


def test_the_provenance_says_how_many_visits_were_retaken_and_why() -> None:
    from stratabench.report.provenance import provenance
    from stratabench.results.records import CellResult, MetricResult, Retake

    def cell(name: str, probe_ns: tuple[float, ...], *retaken: Retake) -> CellResult:
        return CellResult("s", name, {}, "python", "ok", metrics={"wall_ns": MetricResult.of([1.0])},
                          probe_ns=probe_ns, retaken=retaken)

    results = [cell("a", (1.0, 1.0, 1.0), Retake(2, 130.0, 100.0, {"wall_ns": 2.0}), Retake(2, 150.0, 100.0, {})),
               cell("b", (1.0, 1.0), Retake(0, 121.0, 100.0, {"wall_ns": 2.0})), cell("c", ())]
    facts = dict(provenance({}, results))
    assert facts["samples retaken"] == ("2 of 5 visits, because a short fixed loop timed just before and after the "
                                        "sample ran 1.21–1.50× its median over the run (the machine was slower "
                                        "then); 3 samples set aside, kept in the results file")
    assert "samples retaken" not in dict(provenance({}, [cell("c", ())]))
