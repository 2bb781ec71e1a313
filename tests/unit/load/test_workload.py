from __future__ import annotations

from collections import Counter

import pytest

from stratabench.errors import UnknownNameError
from stratabench.load.workload import PLAN_LENGTH, WORKLOADS, plan_operations, workload


def test_an_unknown_workload_is_refused_with_the_known_ones() -> None:
    with pytest.raises(UnknownNameError, match=r"unknown workload 'd'; known: get, put, a, b, c"):
        workload("d")


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_a_plan_has_the_workloads_share_of_reads_and_only_owned_keys(name: str) -> None:
    plan = plan_operations(WORKLOADS[name], 50, seed=3)
    assert len(plan.reads) == len(plan.keys) == PLAN_LENGTH
    assert set(plan.keys) <= set(range(50))
    share = sum(plan.reads) / PLAN_LENGTH
    assert share == pytest.approx(WORKLOADS[name].read_fraction, abs=0.01)


def test_the_same_seed_gives_the_same_plan_and_another_seed_another() -> None:
    assert plan_operations(workload("a"), 100, 1) == plan_operations(workload("a"), 100, 1)
    assert plan_operations(workload("a"), 100, 1) != plan_operations(workload("a"), 100, 2)


def test_zipfian_keys_are_skewed_and_uniform_keys_are_not() -> None:
    zipfian = Counter(plan_operations(workload("c"), 1000, 5).keys)
    uniform = Counter(plan_operations(workload("get"), 1000, 5).keys)
    # 1/rank**0.99 over 1000 keys gives the first rank about 13% of requests; uniform gives each 0.1%.
    assert zipfian.most_common(1)[0][1] > 0.1 * PLAN_LENGTH
    assert uniform.most_common(1)[0][1] < 0.003 * PLAN_LENGTH
