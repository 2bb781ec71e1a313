from __future__ import annotations

import psutil

from stratabench.load.client import ClientSpec
from stratabench.load.processes import LocalProcesses
from tests.unit.load.sleepy_requests import SleepyPlan


def specs(plan: SleepyPlan, clients: int) -> list[ClientSpec]:
    return [ClientSpec(index=i, clients=clients, requests=plan, rate_per_s=None, warmup_s=0.1, duration_s=0.8,
                       intervals=5) for i in range(clients)]


def running(pid: int) -> bool:
    return psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE


def test_each_client_is_a_process_of_its_own_and_none_outlives_the_run() -> None:
    reports = LocalProcesses().run(specs(SleepyPlan(), 3), timeout_s=60)
    assert [r.index for r in reports] == [0, 1, 2]
    assert all(r.fatal is None and r.ops > 0 and r.kinds == {"read": r.ops} for r in reports)
    assert len({r.pid for r in reports}) == 3 and not any(running(r.pid) for r in reports)


def test_a_client_process_that_dies_is_reported_and_the_others_finish() -> None:
    reports = LocalProcesses().run(specs(SleepyPlan(dying_client=1), 2), timeout_s=60)
    assert reports[1].fatal == "client 1 died (exit code 3)" and reports[1].ops == 0
    assert reports[0].fatal is None and reports[0].ops > 0
    assert not any(running(r.pid) for r in reports)


def test_a_client_that_overruns_its_time_is_ended() -> None:
    reports = LocalProcesses().run(specs(SleepyPlan(), 1), timeout_s=0.3)
    assert reports[0].fatal == "client 0 had not finished after its time was up"
    assert not running(reports[0].pid)
