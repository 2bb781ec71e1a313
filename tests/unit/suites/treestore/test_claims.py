"""The study's comparison column and the seven claims, checked against the published figures."""

from __future__ import annotations

import pytest

from stratabench.suites.treestore.claims import judge_claims, published_means
from stratabench.suites.treestore.reference import PUBLISHED, comparison


@pytest.mark.parametrize("n, number, backend, printed", [
    (1000, 1, "mongodb", "1.829× slower"), (1000, 3, "mongodb", "6.023× faster"),
    (1000, 3, "redis", "16.012× faster"), (10000, 18, "redis", "1.001× slower"), (100000, 3, "redis", "1450.365× faster"),
])
def test_the_comparison_column_prints_as_sysrepo_does(n: int, number: int, backend: str, printed: str) -> None:
    row = PUBLISHED[n][number - 1]
    assert comparison(row[3 if backend == "mongodb" else 4], row[2]) == printed


def test_every_claim_holds_on_the_published_figures() -> None:
    judged = judge_claims(published_means, ["json-file", "mongodb", "redis"], 10_000, sorted(PUBLISHED))
    assert [(j.number, j.holds) for j in judged] == [(n, True) for n in range(1, 8)]


def test_a_claim_breaks_when_its_figures_do() -> None:
    def slower_cached_create(backend: str, n: int, number: int) -> float | None:
        value = published_means(backend, n, number)
        return value * 10 if value is not None and backend == "redis" and number == 17 else value

    judged = judge_claims(slower_cached_create, ["json-file", "mongodb", "redis"], 10_000, sorted(PUBLISHED))
    assert [j.number for j in judged if not j.holds] == [6]
    assert "redis" in judged[5].evidence and "✗" in judged[5].evidence


def test_a_claim_about_network_backends_is_not_judged_without_them() -> None:
    judged = judge_claims(published_means, ["json-file"], 10_000, [10_000])
    assert judged[1].holds is None and "network" in judged[1].missing


def test_a_backend_that_could_not_run_at_all_leaves_the_claims_to_those_that_ran() -> None:
    from stratabench.results.records import CellResult, MetricResult
    from stratabench.suites.treestore.means import CellMeans
    from stratabench.suites.treestore.report import claims_table

    def cell(backend: str, number: int) -> CellResult:
        params = {"backend": backend, "n": 10_000, "test": number, "state": "sysrepo"}
        mean = published_means(backend, 10_000, number)
        if mean is None:  # redis+search: no RediSearch 2.x on this server
            return CellResult("treestore", f"{backend}/{number}", params, "python-worker", "unavailable", "no module")
        return CellResult("treestore", f"{backend}/{number}", params, "python-worker", "ok", None, 1,
                          {"wall_ns": MetricResult.of([mean * 1e9] * 10)})  # the study's 10 tries

    backends = ["json-file", "mongodb", "redis", "redis+search"]
    results = [cell(backend, number) for backend in backends for number in range(1, 23)]
    table = claims_table(CellMeans(results), backends, [10_000], "sysrepo")
    assert [row["verdict"] for row in table.rows] == ["holds"] * 7  # not "not measured: redis+search"
    assert not any("redis+search" in str(row) for row in table.rows)


def test_claims_from_fewer_tries_than_an_interval_needs_are_too_few_to_judge() -> None:
    from stratabench.results.records import CellResult, MetricResult
    from stratabench.suites.treestore.means import CellMeans
    from stratabench.suites.treestore.report import claims_table

    results = [CellResult("treestore", f"{backend}/{number}", {"backend": backend, "n": 10_000, "test": number,
                                                                "state": "sysrepo"}, "python-worker", "ok", None, 1,
                          {"wall_ns": MetricResult.of([(published_means(backend, 10_000, number) or 1.0) * 1e9] * 2)})
               for backend in ("json-file", "mongodb", "redis") for number in range(1, 23)]
    table = claims_table(CellMeans(results), ["json-file", "mongodb", "redis"], [10_000], "sysrepo")
    assert {row["verdict"] for row in table.rows} == {"too few to judge (2 tries a cell; --set treestore.tries=10)"}
