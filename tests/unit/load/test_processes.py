from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil

from stratabench.load.client import ClientSpec
from stratabench.load.processes import LocalProcesses
from tests.unit.load.sleepy_requests import SleepyPlan

REPOSITORY = Path(__file__).resolve().parents[3]


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



def test_clients_start_under_a_tmpdir_too_long_for_the_fork_servers_socket(tmp_path: Path) -> None:
    # multiprocessing binds the fork server's socket in its directory under TMPDIR; past 107 bytes that failed
    # with "OSError: AF_UNIX path too long" (a deep CI workspace). Clients then start with spawn instead.
    # In a process of its own: the fork server and multiprocessing's directory are made once per process.
    long_tmpdir = tmp_path / ("d" * 110)
    long_tmpdir.mkdir()
    script = (
        "from tests.unit.load.test_processes import specs\n"
        "from tests.unit.load.sleepy_requests import SleepyPlan\n"
        "from stratabench.load.processes import LocalProcesses\n"
        "reports = LocalProcesses().run(specs(SleepyPlan(), 2), timeout_s=60)\n"
        "print([(r.fatal, r.ops > 0) for r in reports])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=REPOSITORY, env={**os.environ, "TMPDIR": str(long_tmpdir)})
    assert done.returncode == 0 and "AF_UNIX" not in done.stderr, done.stderr[-2000:]
    assert done.stdout.strip() == "[(None, True), (None, True)]"
