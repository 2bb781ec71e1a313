"""Private servers for real: up, status and down through the CLI, kills mid-run, pid safety."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from stratabench.cli import services as services_cli
from stratabench.errors import StoreError, UnknownNameError
from stratabench.layers.stores import open_store
from stratabench.options import RunOptions
from stratabench.redact import password_of
from stratabench.services import SERVICES, state
from stratabench.services.base import RunningService
from stratabench.services.session import LocalServices, local_services
from stratabench.services.state import STATE_ENV
from tests.availability import unavailable

pytestmark = pytest.mark.server


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.fixture
def own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "state" / "services.json"
    monkeypatch.setenv(STATE_ENV, str(path))
    return path


def need(name: str) -> None:
    availability = SERVICES.get(name)().availability()
    if not availability.ok:
        unavailable(availability.reason)


def test_up_status_down(own_state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    need("redis")
    need("memcached")
    assert services_cli.run("up", ["redis", "memcached"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines] == [["redis", "up"], ["memcached", "up"]]
    assert "redis://:***@127.0.0.1:" in lines[0] and "pid " in lines[0]
    recorded = {service.name: service for service in state.load()}
    assert set(recorded) == {"redis", "memcached"}
    assert oct(own_state.stat().st_mode & 0o777) == "0o600"

    # A second `up` finds the running server instead of starting another.
    assert services_cli.run("up", ["redis"]) == 0
    assert f"pid {recorded['redis'].pids[0]}" in capsys.readouterr().out

    from stratabench.cli.main import main

    assert main(["services", "status", "redis", "memcached"]) == 0
    assert [line.split()[1] for line in capsys.readouterr().out.splitlines()] == ["up", "up"]

    assert services_cli.run("down") == 0
    stopped = capsys.readouterr().out
    assert "redis       stopped" in stopped and "memcached   stopped" in stopped
    for service in recorded.values():
        assert gone(service.pids[0])
        assert not Path(service.workdir).exists()
    assert state.load() == []
    assert services_cli.run("status", ["redis"]) == 0
    assert capsys.readouterr().out.split()[:2] == ["redis", "down"]


def test_passwords_are_never_printed(own_state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    need("postgresql")
    try:
        assert services_cli.run("up", ["postgresql"]) == 0
        services_cli.run("status", ["postgresql"])
        services_cli.run("status", ["postgresql"], as_json=True)
        printed = capsys.readouterr().out
        (service,) = state.load()
        password = password_of(service.url)
        assert password and password not in printed
        assert "postgresql://stratabench:***@127.0.0.1:" in printed
        services_cli.run("status", ["postgresql"], show_passwords=True)
        assert password in capsys.readouterr().out  # only when asked for
    finally:
        services_cli.run("down", ["postgresql"])
    assert password not in capsys.readouterr().out


def test_mongodb_runs_on_a_private_postgresql_that_stops_with_it(own_state: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import psycopg
    import pymongo

    need("mongodb")
    assert services_cli.run("up", ["mongodb"]) == 0
    (service,) = state.load()
    try:
        (backing,) = service.under
        assert backing.name == "postgresql" and backing.alive() and service.alive()
        password = password_of(backing.url)
        assert password and password not in " ".join(psutil.Process(service.pids[0]).cmdline())
        assert password not in capsys.readouterr().out
        with pymongo.MongoClient(service.url, serverSelectionTimeoutMS=5000) as client:
            client["sb_probe"]["c"].insert_one({"_id": "x", "r": "y"})
            client["sb_probe"]["c"].create_index("r")
            assert client["sb_probe"]["c"].find_one({"r": "y"}) == {"_id": "x", "r": "y"}
        # FerretDB keeps the data in that PostgreSQL, whose B-tree indexes got GIN twins
        # without a pending list (fastupdate off), which every search would scan in full.
        with psycopg.connect(backing.url) as connection:
            kinds = connection.execute("SELECT indexdef FROM pg_indexes WHERE schemaname = 'sb_probe' "
                                       "AND tablename NOT LIKE '_ferretdb%'").fetchall()
        definitions = " ".join(row[0] for row in kinds)
        assert "USING gin (((_jsonb -> '_id'::text)) jsonb_path_ops) WITH (fastupdate=off)" in definitions
        assert "USING gin (((_jsonb -> 'r'::text)) jsonb_path_ops) WITH (fastupdate=off)" in definitions
    finally:
        assert services_cli.run("down", ["mongodb"]) == 0
    for part in service.each():
        assert gone(part.pids[0]), f"{part.name} outlived `services down`"
        assert not Path(part.workdir).exists()
    assert state.load() == []


def test_unknown_service() -> None:
    with pytest.raises(UnknownNameError, match="redis"):
        services_cli.run("up", ["nosuchserver"])


def test_down_never_signals_a_pid_that_is_not_the_server(own_state: Path) -> None:
    need("redis")
    stranger = subprocess.Popen(["sleep", "60"])
    try:
        impostor = RunningService(
            name="redis",
            url="redis://127.0.0.1:1/0",
            pids=(stranger.pid,),
            port=1,
            workdir=str(own_state.parent / "not-a-server"),
            executable=os.path.realpath(SERVICES.get("redis")().executable()),
            create_times=(psutil.Process(stranger.pid).create_time(),),
        )
        state.record(impostor)
        services_cli.run("down", ["redis"])
        time.sleep(0.2)
        assert stranger.poll() is None, "down signalled a process that is not the recorded server"
    finally:
        stranger.kill()
        stranger.wait()


def test_local_services_stop_even_on_error(own_state: Path) -> None:
    need("redis")
    running: LocalServices | None = None
    with pytest.raises(RuntimeError), local_services(["redis"]) as running:
        assert [s.name for s in state.load()] == ["redis"]
        raise RuntimeError("the run failed")
    assert running is not None
    assert gone(running["redis"].pids[0])
    assert state.load() == []


def test_stores_know_the_server_pids(local_servers: LocalServices, server_url: Callable[[str], str]) -> None:
    with open_store(server_url("redis"), namespace="pids") as store:
        assert store.server_pids == local_servers["redis"].pids
    with open_store(server_url("postgresql"), namespace="pids") as store:
        postmaster, backend = store.server_pids
        assert postmaster == local_servers["postgresql"].pids[0]
        assert psutil.Process(backend).ppid() == postmaster
        store.cleanup()


KILLED = {"redis": "redis", "memcached": "memcached", "postgresql": "postgresql", "mysql": "mariadb", "mongodb": "mongodb"}


@pytest.mark.parametrize("store_name", sorted(KILLED))
def test_server_killed_mid_run_gives_one_line_store_error(store_name: str, own_state: Path) -> None:
    service_name = KILLED[store_name]
    need(service_name)
    running = SERVICES.get(service_name)().start()
    options = RunOptions(settings={f"{store_name}.socket_timeout": "5", f"{store_name}.server_selection_timeout": "2"})
    try:
        store = open_store(running.url, namespace="killed", options=options)
    except BaseException:
        running.stop()
        raise
    try:
        store.put(b"k", b"v" * 1000)
        assert store.get(b"k") == b"v" * 1000
        os.kill(running.pids[0], signal.SIGKILL)
        began = time.monotonic()
        # Operations may still be answered for a moment: from a buffer, or by a
        # PostgreSQL backend that has not yet noticed its postmaster is gone.
        with pytest.raises(StoreError) as caught:
            while time.monotonic() - began < 15:
                store.get(b"k")
                store.put(b"k", b"w")
                time.sleep(0.05)
        took = time.monotonic() - began
        message = str(caught.value)
        assert "\n" not in message
        assert store_name in message and f"127.0.0.1:{running.port}" in message
        password = password_of(running.url)
        assert not password or password not in message
        assert took < 15, f"the error took {took:.1f} s"
    finally:
        store.close()
        running.stop()
    assert not Path(running.workdir).exists()
