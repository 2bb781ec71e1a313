"""Private servers are private: a cleaned environment, a password where the server takes one, 0700 directories."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from stratabench.errors import StoreError
from stratabench.redact import password_of
from stratabench.services import SERVICES, state
from stratabench.services.base import RunningService
from stratabench.services.ports import LOOPBACK
from stratabench.services.state import STATE_ENV
from tests.availability import unavailable

pytestmark = pytest.mark.server

CANARY = "STRATABENCH_TEST_CANARY_SECRET"


def started(name: str) -> Iterator[RunningService]:
    service = SERVICES.get(name)()
    availability = service.availability()
    if not availability.ok:
        unavailable(availability.reason)
    running = service.start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(params=["redis", "memcached", "postgresql", "mariadb", "mongodb"])
def server(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[RunningService]:
    monkeypatch.setenv(CANARY, "do-not-leak")
    yield from started(request.param)


def test_servers_see_only_a_cleaned_environment_and_private_directories(server: RunningService) -> None:
    parts = list(server.each())  # the MongoDB-wire server's PostgreSQL too
    processes = [psutil.Process(pid) for part in parts for pid in part.pids]
    processes += [child for process in processes for child in process.children(recursive=True)]
    checked = 0
    for process in processes:
        try:
            environment = process.environ()
        except psutil.NoSuchProcess:  # a backend that ended since it was listed has no environment to leak
            continue
        checked += 1
        assert CANARY not in environment, f"{server.name} inherited the caller's environment"
        assert set(environment) <= {"PATH", "HOME", "TMPDIR", "LANG", "PWD", "PGDATA", "PG_GRANDPARENT_PID",
                                    "PGLOCALEDIR", "PGSYSCONFDIR", "LC_COLLATE", "LC_CTYPE", "LC_MESSAGES",
                                    "LC_MONETARY", "LC_NUMERIC", "LC_TIME"}, sorted(environment)
    assert checked >= len(parts), f"{server.name}: only {checked} of its processes were there to check"
    for directory, _, _ in (step for part in parts for step in os.walk(part.workdir)):
        mode = stat.S_IMODE(os.stat(directory).st_mode)
        assert mode == 0o700, f"{directory} is {oct(mode)}"


@pytest.mark.skipif(os.geteuid() != 0, reason="servers drop to nobody only when started by root")
def test_every_server_runs_as_nobody_under_root(server: RunningService) -> None:
    # Issue 27, item 7: the MongoDB-wire server (FerretDB) ran as root; the other four dropped to nobody.
    processes = [psutil.Process(pid) for part in server.each() for pid in part.pids]
    processes += [child for process in processes for child in process.children(recursive=True)]
    assert processes and {process.username() for process in processes} == {"nobody"}, server.name


def test_redis_asks_for_its_password() -> None:
    for running in started("redis"):
        password = password_of(running.url)
        assert password and len(password) >= 16
        assert password not in " ".join(psutil.Process(running.pids[0]).cmdline())  # ps shows the command line
        with socket.create_connection((LOOPBACK, running.port), timeout=5) as sock:
            sock.sendall(b"SET stolen 1\r\n")
            assert sock.recv(128).startswith(b"-NOAUTH")
        assert password not in running.redacted_url and password not in str(running.describe())


def test_memcached_asks_for_its_password_and_the_store_gives_it() -> None:
    from stratabench.layers.stores import open_store

    for running in started("memcached"):
        password = password_of(running.url)
        assert password and len(password) >= 16
        assert password not in " ".join(psutil.Process(running.pids[0]).cmdline())
        with socket.create_connection((LOOPBACK, running.port), timeout=5) as sock:
            sock.sendall(b"get stolen\r\n")
            assert sock.recv(128).startswith(b"CLIENT_ERROR unauthenticated")
        auth = Path(running.workdir) / "auth"
        assert stat.S_IMODE(auth.stat().st_mode) == 0o600
        with open_store(running.url, namespace="auth-test") as store:
            store.put(b"k", b"v")
            assert store.get(b"k") == b"v" and list(store.keys()) == [b"k"]  # keys: a socket of its own
            store.cleanup()
        wrong = running.url.replace(password, "not-the-password")
        with pytest.raises(StoreError, match="authentication refused") as caught:
            open_store(wrong, namespace="auth-test")
        assert password not in str(caught.value) and "not-the-password" not in str(caught.value)
        assert password not in running.redacted_url and password not in str(running.describe())


def test_mongodb_refuses_a_client_without_its_password_and_the_store_gives_it() -> None:
    # Issue 27, item 7: the MongoDB-wire server served any local client; the other private servers have passwords.
    import pymongo
    from pymongo.errors import OperationFailure

    from stratabench.layers.stores import open_store

    for running in started("mongodb"):
        password = password_of(running.url)
        assert password and len(password) >= 16
        assert all(password not in " ".join(psutil.Process(pid).cmdline()) for part in running.each()
                   for pid in part.pids)
        for url in (f"mongodb://{LOOPBACK}:{running.port}/",
                    running.url.replace(password, "not-the-password")):
            with pymongo.MongoClient(url, serverSelectionTimeoutMS=5000) as client:
                client.admin.command("hello")  # answered to anyone, as MongoDB does
                with pytest.raises(OperationFailure, match="password authentication failed"):
                    client["stolen"]["kv"].insert_one({"_id": 1})
                with pytest.raises(OperationFailure, match="password authentication failed"):
                    client.list_database_names()
            with pytest.raises(StoreError, match="authentication refused") as caught:
                open_store(url, namespace="auth-test")
            assert password not in str(caught.value) and "not-the-password" not in str(caught.value)
        with open_store(running.url, namespace="auth-test") as store:
            store.put(b"k", b"v")
            assert store.get(b"k") == b"v" and list(store.keys()) == [b"k"]
            store.cleanup()
        assert password not in running.redacted_url and password not in str(running.describe())


def test_the_state_directory_is_made_private_even_if_it_existed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parent = tmp_path / "cache" / "stratabench"
    parent.mkdir(parents=True, mode=0o755)
    os.chmod(parent, 0o755)  # as the dataset cache leaves it
    monkeypatch.setenv(STATE_ENV, str(parent / "services.json"))
    state.remove([])
    assert stat.S_IMODE(parent.stat().st_mode) == 0o700
    assert stat.S_IMODE((parent / "services.json").stat().st_mode) == 0o600


def test_a_state_file_in_a_shared_directory_leaves_that_directory_alone(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)  # as /tmp is: tightening it would lock every other user out
    monkeypatch.setenv(STATE_ENV, str(shared / "services.json"))
    state.remove([])
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777


@pytest.mark.parametrize("name", ["memcached", "redis", "mongodb"])
def test_a_server_started_by_a_killed_caller_does_not_outlive_it(name: str, tmp_path: Path) -> None:
    # A library caller (a test, a script) starts a private server and is killed with SIGKILL, as a
    # time-boxed test session is: the server must go too, not run on under init (ppid 1) with nobody
    # holding its pid. Only `services up` asks for servers that outlive their caller. The
    # MongoDB-wire server's PostgreSQL is started by the same caller and must go with it as well.
    if not SERVICES.get(name)().availability().ok:
        unavailable(SERVICES.get(name)().availability().reason)
    script = (
        "import sys, time\n"
        "from stratabench.services import SERVICES\n"
        f"running = SERVICES.get({name!r})().start()\n"
        "print(*(part.pids[0] for part in running.each()), flush=True)\n"
        "time.sleep(120)\n"
    )
    env = {**os.environ, STATE_ENV: str(tmp_path / "state" / "services.json")}
    caller = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
    assert caller.stdout is not None
    try:
        servers = [psutil.Process(int(pid)) for pid in caller.stdout.readline().split()]
        assert servers and all(server.ppid() == caller.pid for server in servers)
    finally:
        caller.kill()
        caller.wait()
        caller.stdout.close()
    for server in servers:
        try:
            server.wait(timeout=2)
        except psutil.TimeoutExpired:
            left = f"{server.name()} (pid {server.pid}, ppid {server.ppid()})"
            server.kill()
            pytest.fail(f"{left} of {name} outlived its killed caller")


def test_postgresql_keeps_its_shared_memory_in_its_own_directory() -> None:
    # POSIX segments in /dev/shm outlive a postmaster killed with SIGKILL; files in the workdir go with it.
    for running in started("postgresql"):
        import psycopg

        with psycopg.connect(running.url) as db:
            row = db.execute("SHOW dynamic_shared_memory_type").fetchone()
        assert row is not None and row[0] == "mmap"
        assert (Path(running.workdir) / "data" / "pg_dynshmem").is_dir()
