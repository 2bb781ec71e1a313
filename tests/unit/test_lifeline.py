"""Children with a parent-death signal: they end when the process that started them is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest

from stratabench.lifeline import parent_death_signal, popen_tied

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")


def wait_gone(pid: int, timeout: float = 2.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.02)
    return False


def test_a_tied_child_outlives_the_thread_that_asked_for_it() -> None:
    # The kernel's "parent" is the forking thread: a pool thread ending must not kill the server.
    started: list[subprocess.Popen[bytes]] = []
    thread = threading.Thread(target=lambda: started.append(popen_tied(["sleep", "30"])))
    thread.start()
    thread.join()
    child = started[0]
    try:
        time.sleep(0.3)
        assert child.poll() is None
    finally:
        child.kill()
        child.wait()


@pytest.mark.parametrize("how", ["popen_tied", "parent_death_signal"])
def test_children_die_with_a_parent_killed_by_sigkill(tmp_path: Path, how: str) -> None:
    pid_file = tmp_path / "child.pid"
    start = (
        "child = popen_tied(['sleep', '60'], start_new_session=True)"
        if how == "popen_tied"
        else "child = subprocess.Popen(['sleep', '60'], start_new_session=True, preexec_fn=parent_death_signal())"
    )
    script = textwrap.dedent(f"""
        import pathlib, subprocess, time
        from stratabench.lifeline import parent_death_signal, popen_tied
        {start}
        pathlib.Path({str(pid_file)!r}).write_text(str(child.pid))
        time.sleep(60)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 20
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline and parent.poll() is None, "the parent did not start its child"
            time.sleep(0.05)
        child_pid = int(pid_file.read_text())
        assert psutil.pid_exists(child_pid)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        # In a session of its own, no group signal reaches it: only the parent-death signal.
        assert wait_gone(child_pid), "the child outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_unsupported_platform_gives_no_preexec(monkeypatch: pytest.MonkeyPatch) -> None:
    import stratabench.lifeline as lifeline

    monkeypatch.setattr(lifeline, "_PRCTL", None)
    assert lifeline.parent_death_signal() is None
