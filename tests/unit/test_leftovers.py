"""The test command's last check finds the run's own processes, and no other run's."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests import leftovers
from tests.leftovers import RUN_ENV, run_processes


def test_the_runs_processes_are_found_reported_and_killed_and_no_other_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    server_dir = run / "tmp" / "stratabench-redis-x"
    server_dir.mkdir(parents=True)
    other = tmp_path / "run2"  # another run, whose name starts with this one's
    other.mkdir()
    sleep = ["sleep", "60"]
    marked = subprocess.Popen(sleep, env={**os.environ, RUN_ENV: str(run)})
    # A server's cleaned environment has no marker: its working directory is in the run's.
    server = subprocess.Popen(sleep, env={"PATH": os.environ["PATH"]}, cwd=server_dir)
    stranger = subprocess.Popen(sleep, env={**os.environ, RUN_ENV: str(other)}, cwd=other)
    try:
        found = {process.pid for process in run_processes(str(run))}
        assert marked.pid in found and server.pid in found and stranger.pid not in found

        monkeypatch.setattr(leftovers, "GRACE_S", 0.0)
        assert leftovers.main([str(run)]) == 1
        assert marked.poll() is not None and server.poll() is not None  # killed, and reaped by the check
        assert stranger.poll() is None
        report = capsys.readouterr().err
        assert "2 process(es) started by this test run are still running" in report
        assert f"pid {marked.pid}," in report and f"pid {stranger.pid}," not in report
        assert leftovers.main([str(run)]) == 0
    finally:
        for process in (marked, server, stranger):
            process.kill()
            process.wait()
