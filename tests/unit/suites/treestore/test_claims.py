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
