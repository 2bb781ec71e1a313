"""A run stopped by SIGTERM, or killed with SIGKILL, with ``--services local``: nothing left behind.

Each test runs ``stratabench run`` as a real subprocess in a session of its
own, measuring the user's records against the session's Redis and
PostgreSQL (which hold the user's sentinels) and its own private servers,
and stops it mid-run:

- SIGTERM: it stops like Ctrl-C: exit 143, says where the results are,
  stops its servers, removes its temporary root; the results file is whole.
- kill -9 of its process group: 2 s later no process of it is alive (its
  servers and the Go program sit in sessions of their own: the parent-death
  signal and the stdin pipe end them), the results file has no broken line,
  the next run sweeps the temporary root it left, and ``stratabench clean``
  removes the namespaces it left in Redis and PostgreSQL and nothing else.

No password used anywhere appears in anything printed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from stratabench.build_cache import CACHE_DIR_ENV
from stratabench.layers.stores import open_store
from stratabench.layers.stores.base import Sweepable
from stratabench.layers.stores.namespaces import SWEEP_NAMESPACE
from stratabench.redact import password_of
from stratabench.services.base import RunningService
from stratabench.services.state import STATE_ENV
from tests.sentinels import SENTINELS, close_sentinel_clients  # noqa: F401 -- a fixture

pytestmark = [pytest.mark.server, pytest.mark.slow, pytest.mark.usefixtures("close_sentinel_clients")]

STARTUP_S = 300.0


@dataclass
class Run:
    process: subprocess.Popen[bytes]
    root: Path
    output: Path
    stdout: Path
    stderr: Path

    def printed(self) -> str:
        return self.stdout.read_text(errors="replace") + self.stderr.read_text(errors="replace")


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[dict[str, str]]:
    """TMPDIR, services state and build cache of the runs' own (an empty cache: the embed asset is built).

    TMPDIR is not below pytest's 0700 ``tmp_path``: under root the private
    servers run as ``nobody``, who must pass through it to their directories.
    """
    tmp = Path(tempfile.mkdtemp(prefix="stratabench-kill-test-"))
    os.chmod(tmp, 0o711)
    try:
        yield {**os.environ, "TMPDIR": str(tmp), STATE_ENV: str(tmp_path / "state" / "services.json"),
               CACHE_DIR_ENV: str(tmp_path / "cache")}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def stratabench(env: dict[str, str], *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stratabench.cli.main", *args], env=env, capture_output=True,
                          text=True, timeout=600, check=False, **kwargs)  # type: ignore[call-overload]


def records(tmp_path: Path) -> Path:
    data = tmp_path / "records.jsonl"
    data.write_text("".join(json.dumps({"id": n, "name": f"item {n}", "score": n * 1.5}) + "\n" for n in range(300)))
    return data


def start(tmp_path: Path, env: dict[str, str], *stores: str, min_time: str = "0.05") -> Run:
    output = tmp_path / "results.jsonl"
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    args = ["run", "--data", str(records(tmp_path)), "--services", "local", "--codec", "json", "--compressor", "none",
            "--samples", "5", "--min-time", min_time, "-o", str(output)]
    for url in stores:
        args += ["--store", url]
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "stratabench.cli.main", *args], env=env,
                                   stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, start_new_session=True)
    return Run(process, Path(env["TMPDIR"]) / "stratabench", output, out, err)


def wait_for(run: Run, condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + STARTUP_S
    while not condition():
        if run.process.poll() is not None:
            pytest.fail(f"the run ended (code {run.process.returncode}) before {what}: {run.printed()[-2000:]}")
        if time.monotonic() > deadline:
            run.process.kill()
            pytest.fail(f"no {what} within {STARTUP_S:.0f} s")
        time.sleep(0.1)


def servers_of(env: dict[str, str], owner: int) -> list[RunningService]:
    path = Path(env[STATE_ENV])
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    return [s for s in map(RunningService.from_json, data.get("services", [])) if s.owner_pid == owner]


def cells_written(run: Run) -> int:
    try:
        return max(0, len(run.output.read_text().splitlines()) - 1)
    except OSError:
        return 0


def run_namespaces(url: str) -> list[str]:
    with open_store(url, namespace=SWEEP_NAMESPACE, sweeping=True) as store:
        assert isinstance(store, Sweepable)
        return store.list_namespaces()


def alive(pids: set[int]) -> list[int]:
    left = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                left.append(pid)
        except psutil.NoSuchProcess:
            pass
    return left


def family(root: int, servers: list[RunningService]) -> set[int]:
    """The run's process and every process it started, servers (own sessions) included."""
    pids = {root, *(pid for server in servers for part in server.each() for pid in part.pids)}
    for pid in list(pids):
        try:
            pids.update(child.pid for child in psutil.Process(pid).children(recursive=True))
        except psutil.NoSuchProcess:
            pass
    return pids


def assert_whole(results: Path) -> int:
    lines = results.read_text().splitlines()
    for number, line in enumerate(lines, 1):
        json.loads(line)  # a broken line raises, naming itself
    assert json.loads(lines[0])["type"] == "header"
    return len(lines) - 1


def no_password(text: str, urls: list[str]) -> None:
    for url in urls:
        password = password_of(url)
        assert not password or password not in text, f"a password of {url.split('@')[-1]} was printed"


@pytest.fixture
def user_stores(server_url: Callable[[str], str]) -> Iterator[tuple[str, str, Callable[[], bool]]]:
    redis_url, postgresql_url = server_url("redis"), server_url("postgresql")
    redis_intact = SENTINELS["redis"](redis_url)
    postgresql_intact = SENTINELS["postgresql"](postgresql_url)
    yield redis_url, postgresql_url, lambda: redis_intact() and postgresql_intact()


def test_sigterm_stops_the_run_like_ctrl_c(tmp_path: Path, sandbox: dict[str, str]) -> None:
    run = start(tmp_path, sandbox)
    wait_for(run, lambda: cells_written(run) >= 2 and len(servers_of(sandbox, run.process.pid)) >= 2,
             "cells and servers")
    servers = servers_of(sandbox, run.process.pid)
    before = family(run.process.pid, servers)
    os.kill(run.process.pid, signal.SIGTERM)  # the process only, as `kill PID` does
    code = run.process.wait(timeout=120)
    printed = run.printed()
    assert code == 143, printed[-2000:]
    assert f"terminated (SIGTERM): the cells measured so far are in {run.output}" in printed
    assert "Traceback" not in printed
    assert alive(before) == [], "processes of the run outlived it"
    assert assert_whole(run.output) >= 2
    assert servers_of(sandbox, run.process.pid) == []
    assert list(run.root.iterdir()) == [], "the run left its temporary root"
    no_password(printed + run.output.read_text(), [s.url for s in servers])


@pytest.mark.parametrize("target", ["redis", "postgresql"])
def test_kill_9_leaves_no_process_no_directory_and_clean_removes_the_rest(
    tmp_path: Path, sandbox: dict[str, str], user_stores: tuple[str, str, Callable[[], bool]], target: str
) -> None:
    redis_url, postgresql_url, sentinels_intact = user_stores
    target_url = {"redis": redis_url, "postgresql": postgresql_url}[target]
    assert run_namespaces(target_url) == []
    # A store cell's namespace lives only while a round's worker holds it: samples of 0.5 s keep it there for
    # a second or more, so the kill lands inside it even on a loaded machine (with 0.05 s the visit had ended
    # once, and the test proved nothing).
    run = start(tmp_path, sandbox, redis_url, postgresql_url, min_time="0.5")
    # Killed while a cell is writing to the user's store, so it leaves a namespace there.
    wait_for(run, lambda: bool(run_namespaces(target_url)), f"a namespace in {target}")
    servers = servers_of(sandbox, run.process.pid)
    assert len(servers) >= 2
    before = family(run.process.pid, servers)
    os.killpg(run.process.pid, signal.SIGKILL)
    run.process.wait()
    time.sleep(2)
    assert alive(before) == [], f"alive 2 s after kill -9: {alive(before)}"
    assert_whole(run.output)
    leftover = [root for root in run.root.iterdir() if root.name.endswith(f"-{run.process.pid}")]
    assert len(leftover) == 1, "kill -9 should leave the root for the next run to sweep"

    left = run_namespaces(target_url)
    assert left, "the killed run left nothing to clean: the test proves nothing"
    cleaned = stratabench(sandbox, "clean", "--store", redis_url, "--store", postgresql_url)
    assert cleaned.returncode == 0, cleaned.stderr
    assert all(f"removed {name}" in cleaned.stdout for name in left)
    assert run_namespaces(redis_url) == [] and run_namespaces(postgresql_url) == []
    assert sentinels_intact(), "a sentinel of the user did not survive"

    following = stratabench(sandbox, "run", "timeit", "--samples", "1", "--min-time", "0.001", "-q",
                            "-o", str(tmp_path / "next.jsonl"))
    assert following.returncode == 0, following.stderr
    assert list(run.root.iterdir()) == [], "the next run did not sweep the leftover root"

    printed = run.printed() + cleaned.stdout + cleaned.stderr + following.stdout + following.stderr
    no_password(printed + run.output.read_text(), [redis_url, postgresql_url, *(s.url for s in servers)])


def test_kill_9_during_the_go_build_leaves_nothing(
    tmp_path: Path, sandbox: dict[str, str], go_program: Callable[[str], Path]
) -> None:
    go_program("stratabench-go")
    output = tmp_path / "results.jsonl"
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    args = ["run", "bulkload", "--codec", "json", "--size", "5000", "--samples", "1", "--min-time", "0.001",
            "--set", "go.formats=embed", "--set", "go.variants=warm", "-o", str(output)]
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "stratabench.cli.main", *args], env=sandbox,
                                   stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, start_new_session=True)
    run = Run(process, Path(sandbox["TMPDIR"]) / "stratabench", output, out, err)

    def building() -> bool:
        try:
            # `go build`, not the `go env` / `go version` that key the build cache before it.
            return any(child.name() == "go" and "build" in child.cmdline()
                       for child in psutil.Process(process.pid).children(recursive=True))
        except psutil.Error:
            return False

    # stratabench-go sits in a session of its own, and the go build it runs under it.
    wait_for(run, building, "go build")
    before = family(process.pid, [])
    assert any(psutil.Process(pid).name() == "stratabench-go" for pid in alive(before))
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    time.sleep(2)
    assert alive(before) == [], f"alive 2 s after kill -9: {alive(before)}"
    assert_whole(output)
    following = stratabench(sandbox, "run", "timeit", "--samples", "1", "--min-time", "0.001", "-q",
                            "-o", str(tmp_path / "next.jsonl"))
    assert following.returncode == 0, following.stderr
    assert list(run.root.iterdir()) == [], "the next run did not sweep the leftover root"
