"""Twenty kill -9s of a run's process group at random moments: nothing corrupt, nothing alive, nothing left.

The moments are drawn from a seeded generator (the seed is in the test id):
most runs measure the user's records against the session's Redis and
PostgreSQL (which hold the user's sentinels), some also start every private
server (``--services local``), and some are killed while ``go build`` runs
(``--rebuild``: the Go programs and the embed asset are built anew). After
each kill:

- the results file, if the run got as far as writing one, reads back through
  the results reader with no warning and every line is whole JSON;
- 2 s later no process of the run is alive: the run is found by a marker
  in its environment (the Go program and ``go build`` inherit it), private
  servers (which get a cleaned environment) by their working directory
  under the run's own TMPDIR, and both besides by the process tree taken
  just before the kill;
- ``stratabench clean --store URL`` leaves no namespace of the tool in Redis
  or PostgreSQL and every sentinel intact;
- a run that got as far as making its temporary root swept every earlier
  one; a last run sweeps the rest, and nothing else is left in TMPDIR;
- no password (the user's stores', the private servers') was printed.

Each run is tiny (300 records, one suite, 12 cells of which memory is the
only embedded store), so that the whole test aims at CI's three minutes; on
a 2-core machine shared with three other test sessions it took 6 min 15 s,
most of it each run's start-up (about 5 s there) and the 2 s waits.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from stratabench.cli.main import main
from stratabench.results.format import load
from tests.integration.test_kill import (  # noqa: F401 -- fixtures
    alive,
    family,
    no_password,
    records,
    run_namespaces,
    sandbox,
    servers_of,
    user_stores,
)
from tests.sentinels import close_sentinel_clients  # noqa: F401 -- a fixture

pytestmark = [pytest.mark.server, pytest.mark.slow, pytest.mark.usefixtures("close_sentinel_clients")]

SEED = 20261123
MARKER = "STRATABENCH_KILL_TEST_MARKER"
# What each run does and the part of its life where it is killed, at a random moment of that part.
MOMENTS = (
    [("stores", "starting")] * 3      # importing, sweeping, planning, generating the dataset
    + [("stores", "cells")] * 6       # after a random number of finished cells
    + [("stores", "namespace")] * 4   # while a cell writes in the user's Redis or PostgreSQL
    + [("services", "starting")] * 2  # while the private servers start (initdb, install)
    + [("services", "cells")] * 2     # measuring against them
    + [("go build", "building")] * 3  # while go build runs under the Go program
)
KILLS = len(MOMENTS)
WAIT_S = 120.0


def arguments(kind: str, data: Path, output: Path, redis_url: str, postgresql_url: str) -> list[str]:
    quick = ["--samples", "3", "--min-time", "0.01", "-o", str(output)]
    if kind == "go build":
        return ["run", "bulkload", "--codec", "json", "--size", "300", "--rebuild",
                "--set", "go.formats=embed", "--set", "go.variants=warm", *quick]
    stores = ["--store", redis_url, "--store", postgresql_url]
    local = ["--services", "local"] if kind == "services" else []
    # Of the embedded stores only memory: the cells that write in the user's stores come sooner.
    return ["run", "--data", str(data), "--codec", "json", "--compressor", "none", "--set", "matrix.stores=memory",
            *local, *stores, *quick]


def of_the_run(marker: str, tmp: Path) -> set[int]:
    """Processes carrying the run's marker, or working in its TMPDIR (servers: a cleaned environment)."""
    found = set()
    for process in psutil.process_iter():
        try:
            if process.environ().get(MARKER) == marker or Path(process.cwd()).is_relative_to(tmp):
                found.add(process.pid)
        except (psutil.Error, OSError):
            pass
    return found


def building(pid: int) -> bool:
    """Whether ``go build`` runs under the run (not a short ``go env`` or ``go version``)."""
    try:
        return any(child.name() == "go" and "build" in child.cmdline()
                   for child in psutil.Process(pid).children(recursive=True))
    except psutil.Error:
        return False


def cells(output: Path) -> int:
    try:
        return max(0, len(output.read_text().splitlines()) - 1)
    except OSError:
        return 0


def server_starting(tmp: Path) -> bool:
    """Whether a private server (or its initdb) runs: they alone work in a directory under the run's TMPDIR."""
    for process in psutil.process_iter():
        try:
            if Path(process.cwd()).is_relative_to(tmp):
                return True
        except (psutil.Error, OSError):
            pass
    return False


def kill_moment(rand: random.Random, kind: str, part: str, process: subprocess.Popen[bytes], output: Path,
                sandbox: dict[str, str], stores: tuple[str, str]) -> None:
    """Wait for the part of the run named ``part``, then a random moment more."""
    target = rand.randint(0, 5)
    reached: Callable[[], bool] = {
        "starting": lambda: kind != "services" or server_starting(Path(sandbox["TMPDIR"])),
        "cells": lambda: cells(output) >= target and (kind != "services" or bool(servers_of(sandbox, process.pid))),
        "namespace": lambda: any(run_namespaces(url) for url in stores),
        "building": lambda: building(process.pid),
    }[part]
    deadline = time.monotonic() + WAIT_S
    while not reached():
        assert process.poll() is None, f"the run ended (exit {process.returncode}) before the moment ({part})"
        assert time.monotonic() < deadline, f"the run did not reach the moment ({part}) in {WAIT_S:.0f} s"
        time.sleep(0.02)
    time.sleep({"starting": rand.uniform(0.2, 3.0), "cells": rand.uniform(0.0, 0.3),
                "namespace": rand.uniform(0.0, 0.05), "building": rand.uniform(0.0, 1.0)}[part])


@pytest.mark.parametrize("seed", [SEED])
def test_twenty_kill_9s_at_random_moments_leave_nothing(
    tmp_path: Path, sandbox: dict[str, str], user_stores: tuple[str, str, Callable[[], bool]],  # noqa: F811
    capsys: pytest.CaptureFixture[str], seed: int,
) -> None:
    redis_url, postgresql_url, sentinels_intact = user_stores
    rand = random.Random(seed)
    moments = list(MOMENTS)
    rand.shuffle(moments)
    tmp = Path(sandbox["TMPDIR"])
    base = tmp / "stratabench"
    data = records(tmp_path)
    printed, passwords_of = [], [redis_url, postgresql_url]
    roots: list[Path] = []
    reached = {"results": 0, "namespaces": 0, "servers": 0}
    for number, (kind, part) in enumerate(moments):
        output = tmp_path / f"results-{number}.jsonl"
        marker = uuid.uuid4().hex
        env = {**sandbox, MARKER: marker}
        with (tmp_path / "out.txt").open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "stratabench.cli.main",
                 *arguments(kind, data, output, redis_url, postgresql_url)],
                env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            kill_moment(rand, kind, part, process, output, sandbox, (redis_url, postgresql_url))
            servers = servers_of(sandbox, process.pid)
            before = family(process.pid, servers) | of_the_run(marker, tmp)
        finally:
            os.killpg(process.pid, signal.SIGKILL)  # the group outlives its leader only as a zombie
            process.wait()
        time.sleep(2)
        what = f"kill {number + 1} ({kind}, {part})"
        left = alive(before | of_the_run(marker, tmp))
        assert left == [], f"{what}: alive 2 s after kill -9: {[psutil.Process(p).cmdline() for p in left]}"

        if output.exists():
            reached["results"] += 1
            assert load(output).warnings == (), f"{what}: the reader skipped a line"
            for line in output.read_text().splitlines():
                json.loads(line)
        mine = [root for root in base.glob(f"*-{process.pid}")] if base.exists() else []
        if mine:
            unswept = {root.name: sorted(entry.name for entry in root.iterdir())[:8] for root in roots if root.exists()}
            assert unswept == {}, f"{what}: made its root, swept no earlier one (what they hold: {unswept})"
            roots += mine

        reached["namespaces"] += bool(run_namespaces(redis_url) or run_namespaces(postgresql_url))
        assert main(["clean", "--store", redis_url, "--store", postgresql_url]) == 0
        assert run_namespaces(redis_url) == [] and run_namespaces(postgresql_url) == [], what
        assert sentinels_intact(), f"{what}: a sentinel of the user did not survive"

        servers = servers_of(sandbox, process.pid) or servers
        reached["servers"] += bool(servers)
        passwords_of += [server.url for server in servers]
        printed.append((tmp_path / "out.txt").read_text(errors="replace"))
        printed.append(capsys.readouterr().out)

    # The kills must have landed at moments that matter, or the test proves little.
    assert reached["results"] >= 10 and reached["namespaces"] >= 2 and reached["servers"] >= 2, reached
    following = subprocess.run([sys.executable, "-m", "stratabench.cli.main", "run", "timeit", "--samples", "1",
                                "--min-time", "0.001", "-q", "-o", str(tmp_path / "next.jsonl")],
                               env=sandbox, capture_output=True, text=True, timeout=300, check=False)
    assert following.returncode == 0, following.stderr
    assert list(base.iterdir()) == [], "the last run did not sweep the leftover roots"
    assert [entry.name for entry in tmp.iterdir()] == ["stratabench"], "a temporary directory outside the roots"
    no_password("".join(printed) + following.stdout + following.stderr, passwords_of)
