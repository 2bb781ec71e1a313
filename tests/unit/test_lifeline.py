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


def test_children_started_with_the_signal_live_beside_an_active_grpc_channel(tmp_path: Path) -> None:
    # grpc/grpc#43055: with gRPC's fork support on, a child forked while a channel is busy could abort
    # (SIGABRT, "epoll_wait error: Bad file descriptor") before its exec: 8-13 of 300 here. Importing
    # stratabench turns that support off; a fresh interpreter, so that no earlier test's gRPC state counts.
    script = tmp_path / "busy_grpc.py"
    script.write_text(textwrap.dedent("""
        import os, subprocess, sys, threading
        import stratabench  # first, as every stratabench process imports it before gRPC
        from concurrent import futures
        import grpc
        from stratabench.lifeline import parent_death_signal

        server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        call = grpc.insecure_channel(f"127.0.0.1:{port}").unary_unary("/none/none")
        busy = threading.Event()

        def keep_calling():
            while not busy.is_set():
                try:
                    call(b"", timeout=0.05)
                except grpc.RpcError:
                    pass

        threading.Thread(target=keep_calling, daemon=True).start()
        codes = [subprocess.run(["true"], preexec_fn=parent_death_signal(), check=False).returncode
                 for _ in range(300)]
        busy.set()
        server.stop(0)
        print(sum(code != 0 for code in codes), os.environ.get("GRPC_ENABLE_FORK_SUPPORT"))
    """))
    env = {key: value for key, value in os.environ.items() if key != "GRPC_ENABLE_FORK_SUPPORT"}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["0", "false"], done.stdout  # no child died; the setting came from stratabench
