"""The load engine against a real Redis started by stratabench's services code.

Counts, never speeds: closed and open loops answer what they say they did;
merged histograms are exactly the sum of the clients'; a LocalCluster of
several worker processes does the same; a value changed behind the clients'
back is caught; a server killed mid-run fails the configuration in one line,
keeps the histograms, and leaves no client process alive.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from stratabench.cli.main import main
from stratabench.load.cluster import DaskClients, parse_cluster
from stratabench.load.histogram import decode, merge
from stratabench.load.records import generated_payloads
from stratabench.load.recovery import SPILL_DIR, recover_killed_loads
from stratabench.load.spill import client_file, spilled_seconds
from stratabench.load.run import LoadResult, LoadSpec, run_load
from stratabench.load.sweep import SweepLimits, sweep
from stratabench.results.format import load
from stratabench.scratch import scratch_base
from stratabench.services.session import local_services

pytestmark = pytest.mark.server

PAYLOADS = generated_payloads(200, 100, seed=4)


def spec(url: str, **changes: object) -> LoadSpec:
    values: dict[str, object] = {"workload": "get", "clients": 2, "warmup_s": 0.2, "duration_s": 1.0,
                                 "run_id": f"it{os.getpid()}-{time.monotonic_ns()}"}
    values.update(changes)
    return LoadSpec(url, PAYLOADS, **values)  # type: ignore[arg-type]


def assert_counts_add_up(result: LoadResult) -> None:
    merged = decode(result.histogram)
    assert merged.get_total_count() == result.ops == sum(r.ops for r in result.reports)
    assert merge(r.histogram for r in result.reports).equals(merged)
    assert sum(decode(h).get_total_count() for h in result.interval_histograms) == result.ops
    assert sum(sum(r.kinds.values()) for r in result.reports) == result.ops


def assert_no_client_left(result: LoadResult) -> None:
    pids = {r.pid for r in result.reports if r.pid}
    assert pids, "the reports name their processes"
    alive = [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert alive == [], f"client processes still running: {alive}"


def keys_left(url: str, result: LoadResult) -> list[bytes]:
    import redis

    client = redis.Redis.from_url(url)
    try:
        return list(client.scan_iter(match=f"sb:{result.spec.namespace}:*"))
    finally:
        client.close()


def test_a_closed_loop_of_two_processes_answers_and_verifies_every_read(server_url: Callable[[str], str]) -> None:
    url = server_url("redis")
    result = run_load(spec(url))
    assert result.ok, result.error
    assert result.ops > 0 and result.ops_per_s > 0
    assert_counts_add_up(result)
    assert result.reads == result.ops and result.failed_checks == 0
    assert len({r.pid for r in result.reports}) == 2 and os.getpid() not in {r.pid for r in result.reports}
    assert keys_left(url, result) == []
    assert_no_client_left(result)


def test_workload_a_updates_and_reads_back_every_version(server_url: Callable[[str], str]) -> None:
    result = run_load(spec(server_url("redis"), workload="a"))
    assert result.ok, result.error
    kinds = {kind: sum(r.kinds.get(kind, 0) for r in result.reports) for kind in ("read", "update")}
    assert kinds["read"] > 0 and kinds["update"] > 0
    assert result.failed_checks == 0
    assert_counts_add_up(result)


def test_an_open_loop_sends_what_its_schedule_says(server_url: Callable[[str], str]) -> None:
    result = run_load(spec(server_url("redis"), rate_per_s=200.0))
    assert result.ok, result.error
    scheduled = sum(r.scheduled or 0 for r in result.reports)
    assert scheduled == pytest.approx(200, abs=2)  # 1 s at 200 requests/s, split between two schedules
    assert result.ops + sum(r.unsent or 0 for r in result.reports) <= scheduled
    assert_counts_add_up(result)


def test_a_value_changed_behind_the_clients_back_fails_the_check(server_url: Callable[[str], str]) -> None:
    import redis

    url = server_url("redis")
    load = spec(url, clients=1, duration_s=1.5, workload="get")
    victim = f"sb:{load.namespace}:user000000000003".encode()
    client = redis.Redis.from_url(url)
    stop = threading.Event()

    def tamper() -> None:
        while not stop.is_set():
            value = client.get(victim)
            if value is not None and value[-1:] != b"!":
                client.set(victim, value[:-1] + b"!")
            time.sleep(0.01)

    thread = threading.Thread(target=tamper, daemon=True)
    thread.start()
    try:
        result = run_load(load)
    finally:
        stop.set()
        thread.join()
        client.close()
    assert result.failed_checks > 0
    assert result.error == (
        f"{result.failed_checks} of {result.reads} reads did not return what was written; first: "
        "key user000000000003: the value does not match its hash (changed behind the clients' back)"
    )


def kill_once_loaded(url: str, pid: int, keys: int) -> threading.Thread:
    """Kill the server a second after the clients have put their ``keys`` (so, under load)."""
    import redis

    def watch() -> None:
        client = redis.Redis.from_url(url)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and client.dbsize() < keys:
            time.sleep(0.05)
        client.close()
        time.sleep(1.0)
        os.kill(pid, signal.SIGKILL)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def private_redis(server_url: Callable[[str], str], services_state: str) -> Iterator[tuple[str, int]]:
    """A Redis of this test's own, to kill: (url, pid)."""
    server_url("redis")  # skips, or fails under CI, when Redis cannot run here
    with local_services(["redis"]) as running:
        yield running["redis"].url, running["redis"].pids[0]


def test_a_server_killed_under_load_stops_in_one_line_and_keeps_the_histograms(
        private_redis: tuple[str, int]) -> None:
    url, pid = private_redis
    killer = kill_once_loaded(url, pid, len(PAYLOADS))
    result = run_load(spec(url, clients=2, duration_s=6.0))
    killer.join()
    assert result.error is not None and "\n" not in result.error
    assert result.error.startswith("2 of 2 clients stopped early, client ")
    assert result.error.endswith("(latencies measured until then are kept)")
    assert "redis at 127.0.0.1:" in result.error
    assert result.ops > 0 and all(r.window_s < 6.0 for r in result.reports)
    assert_counts_add_up(result)
    assert_no_client_left(result)


def test_clients_on_a_local_dask_cluster_merge_to_the_sum_of_the_workers(server_url: Callable[[str], str]) -> None:
    url = server_url("redis")
    with DaskClients(parse_cluster("local:3"), clients=3) as cluster:
        result = run_load(spec(url, clients=3), cluster)
    assert result.ok, result.error
    assert len({r.pid for r in result.reports}) == 3  # three worker processes, one client each
    assert os.getpid() not in {r.pid for r in result.reports}
    assert all(r.ops > 0 for r in result.reports)
    merged = decode(result.histogram)
    parts = [decode(r.histogram) for r in result.reports]
    assert merged.get_total_count() == sum(p.get_total_count() for p in parts) == result.ops
    assert all(merged.get_count_at_index(i) == sum(p.get_count_at_index(i) for p in parts)
               for i in range(merged.counts_len))
    assert_counts_add_up(result)
    assert_no_client_left(result)


def test_a_sweep_stops_at_the_first_rate_past_its_limit(server_url: Callable[[str], str]) -> None:
    base = spec(server_url("redis"), clients=1, warmup_s=0.1, duration_s=0.5)
    generous = sweep(base, [50.0, 100.0], limits=SweepLimits(p99_ns=5e9))
    assert [p.rate_per_s for p in generous.points] == [50.0, 100.0]
    assert generous.knee is generous.points[-1] and generous.stopped is None
    strict = sweep(base, [50.0, 100.0], limits=SweepLimits(p99_ns=1))
    assert len(strict.points) == 1 and strict.knee is None
    assert strict.stopped is not None and strict.stopped.startswith("p99 ")


def test_the_load_command_writes_one_cell_per_configuration_and_prints_the_table(
        server_url: Callable[[str], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "load.jsonl"
    code = main(["load", "--store", server_url("redis"), "--workload", "a", "--clients", "1,2", "--duration", "0.5",
                 "--warmup", "0.1", "--records", "100", "-o", str(output)])
    out, err = capsys.readouterr()
    assert code == 0, err
    cells = load(output).cells
    assert [c.cell for c in cells] == ["a/c1/closed", "a/c2/closed"]
    for cell in cells:
        assert cell.ok and cell.integrity is not None and cell.integrity.ok
        assert {"ops_per_s", "latency_ns"} <= set(cell.metrics)
        assert decode(cell.notes["histogram"]).get_total_count() == cell.notes["ops"] > 0
    assert "p99" in out and "2 Python" in out and "a/c2/closed" in err
    assert main(["report", str(output)]) == 0  # the header reads back as any run's, to the same table
    assert "2 Python" in capsys.readouterr().out


def test_the_load_command_reports_a_server_killed_under_load_in_one_line(
        private_redis: tuple[str, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url, pid = private_redis
    output = tmp_path / "load.jsonl"
    killer = kill_once_loaded(url, pid, 100)
    code = main(["load", "--store", url, "--clients", "2", "--duration", "6", "--warmup", "0.2", "--records", "100",
                 "-o", str(output)])
    killer.join()
    err = capsys.readouterr().err
    assert code == 1
    failed = [line for line in err.splitlines() if "failed:" in line]
    assert len(failed) == 1 and failed[0].startswith("get/c2/closed: failed: 2 of 2 clients stopped early")
    (cell,) = load(output).cells
    assert cell.status == "failed" and cell.notes["ops"] > 0
    assert decode(cell.notes["histogram"]).get_total_count() == cell.notes["ops"]


def semaphore_inodes(pid: int) -> set[int]:
    """The inodes of the named semaphores ``pid`` has open: its mappings of ``/dev/shm/sem.*`` files.

    glibc maps a semaphore under a temporary name and links it to its real one, so the mapping's name says
    nothing; its inode is the file's, whatever the name.
    """
    with open(f"/proc/{pid}/maps", encoding="utf-8") as maps:
        return {int(line.split()[4]) for line in maps if "/dev/shm/sem." in line}


def semaphores_left(inodes: set[int]) -> list[Path]:
    left = []
    for path in Path("/dev/shm").glob("sem.*"):
        try:
            if path.stat().st_ino in inodes:
                left.append(path)
        except FileNotFoundError:
            pass
    return left


def multiprocessing_dirs(pid: int) -> set[Path]:
    """multiprocessing's temporary directories of ``pid``'s family: where its fork server listens."""
    found = set()
    for child in psutil.Process(pid).children(recursive=True):
        for connection in child.net_connections(kind="unix"):
            if isinstance(connection.laddr, str) and os.path.basename(os.path.dirname(connection.laddr)).startswith(
                    "pymp-"):
                found.add(Path(connection.laddr).parent)
    return found


def start_load(url: str, output: Path, *, duration_s: float = 60, lang: str = "python") -> subprocess.Popen[str]:
    """A `stratabench load` of two clients in a session of its own, returned once its clients are under load."""
    command = [sys.executable, "-m", "stratabench.cli.main", "load", "--store", url, "--clients", "2",
               "--duration", f"{duration_s:g}", "--warmup", "0", "-o", str(output), "--client-lang", lang]
    # Python: the resource tracker, the fork server and two clients; Go: two clients.
    children = 4 if lang == "python" else 2
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               stdin=subprocess.DEVNULL, start_new_session=True)
    import redis

    client = redis.Redis.from_url(url)
    deadline = time.monotonic() + 120
    try:
        # Every client has put its keys (the default 1,000 records), so they are past the start gate.
        while (len(psutil.Process(process.pid).children(recursive=True)) < children
               or sum(1 for _ in client.scan_iter(match="sb:*.load.*:*", count=1000)) < 1000):
            if time.monotonic() > deadline or process.poll() is not None:
                os.killpg(process.pid, signal.SIGKILL)
                raise AssertionError(f"the clients never started: {process.communicate()[1]}")
            time.sleep(0.1)
    finally:
        client.close()
    time.sleep(3.5)  # under load: at least one whole interval (a second) measured
    return process


def load_namespaces(url: str) -> list[str]:
    from stratabench.layers.stores import open_store
    from stratabench.layers.stores.base import Sweepable
    from stratabench.layers.stores.namespaces import SWEEP_NAMESPACE

    with open_store(url, namespace=SWEEP_NAMESPACE, sweeping=True) as store:
        assert isinstance(store, Sweepable)
        return [name for name in store.list_namespaces() if ".load." in name]


@pytest.mark.parametrize("killed", ["process", "group"])
def test_kill_9_of_the_load_command_leaves_nothing_that_clean_and_the_next_run_do_not_sweep(
        server_url: Callable[[str], str], tmp_path: Path, killed: str) -> None:
    # Issue 27, item 6: each kill -9 left the configuration's keys (clean sweeps them), 7 semaphores in /dev/shm
    # (the whole group killed: the resource tracker too) and a pymp-* directory that nothing swept.
    url = server_url("redis")
    process = start_load(url, tmp_path / "load.jsonl")
    try:
        family = {process.pid, *(child.pid for child in psutil.Process(process.pid).children(recursive=True))}
        semaphores = semaphore_inodes(process.pid)
        directories = multiprocessing_dirs(process.pid)
        assert len(semaphores) >= 3 and len(directories) == 1, (semaphores, directories)
        if killed == "group":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
        process.communicate()
        deadline = time.monotonic() + 30
        while (alive := [p for p in family if psutil.pid_exists(p)
                         and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert alive == [], "processes of the killed run are still running"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert load_namespaces(url), "the killed run left its keys (clean finds them by their namespace)"
    if killed == "group":
        # Killed all at once, nobody of the run can tidy up: the test's premise. Killed alone, the command's
        # children end with it (parent-death signal), and whether one of them removes multiprocessing's
        # directory first depends on timing (a CI run under load saw it gone): either way, nothing stays.
        assert all(d.is_dir() for d in directories), "the kill left multiprocessing's directory (the test's premise)"
        assert semaphores_left(semaphores), "the kill left the semaphores (the test's premise)"
    assert main(["clean", "--store", url]) == 0
    assert not load_namespaces(url)
    # The next run sweeps what the killed one's multiprocessing left, and only that.
    assert main(["load", "--store", url, "--duration", "0.2", "--warmup", "0", "-o", str(tmp_path / "next.jsonl"),
                 "-q"]) == 0
    assert semaphores_left(semaphores) == []
    assert [d for d in directories if d.exists()] == []


def test_rediss_against_a_plain_text_server_fails_within_seconds(server_url: Callable[[str], str], tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 27, item 5: the TLS handshake waited out the socket timeout and its retries (123 s).
    url = server_url("redis").replace("redis://", "rediss://", 1)
    started = time.monotonic()
    code = main(["load", "--store", url, "--duration", "0.2", "--warmup", "0", "-o", str(tmp_path / "r.jsonl")])
    err = capsys.readouterr().err
    assert code == 69 and time.monotonic() - started < 15, err
    assert "rediss:// needs a server that speaks TLS; use redis:// for a plain-text one" in err
    assert url.split("@")[0].split(":")[-1] not in err  # the password


@pytest.mark.parametrize(("signum", "to"), [(signal.SIGINT, "group"), (signal.SIGTERM, "group"),
                                           (signal.SIGHUP, "group"), (signal.SIGTERM, "process")])
def test_a_stopped_load_command_deletes_its_keys_itself_and_keeps_a_partial_cell(
        server_url: Callable[[str], str], tmp_path: Path, signum: int, to: str) -> None:
    # Issue 27, item 6: SIGINT, SIGTERM and SIGHUP left the configuration's keys in the user's store, SIGHUP
    # printed a KeyError traceback per semaphore, and the seconds measured were lost. The signal goes to the
    # whole process group, as a terminal's Ctrl-C or hang-up does, or to the command alone, as `kill` does.
    url = server_url("redis")
    output = tmp_path / "load.jsonl"
    process = start_load(url, output)
    try:
        semaphores = semaphore_inodes(process.pid)
        directories = multiprocessing_dirs(process.pid)
        assert semaphores and directories and load_namespaces(url), "the clients are under load"
        if to == "group":
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 128 + signum, err
    assert "Traceback" not in err and "KeyError" not in err, err
    assert f"results so far: {output}" in err
    assert not load_namespaces(url)
    deadline = time.monotonic() + 30  # the resource tracker unlinks what is left once the command's pipe closes
    while semaphores_left(semaphores) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert semaphores_left(semaphores) == [], "semaphores left behind"
    assert [d for d in directories if d.exists()] == [], "multiprocessing's directory left behind"
    (cell,) = load(output).cells
    assert cell.status == "failed" and cell.notes["partial"] is True
    assert cell.error is not None and cell.error.endswith("intervals every client finished"), cell.error
    kept = len(cell.notes["interval_histograms"])
    assert 1 <= kept < 60 and cell.error.startswith(
        f"{'interrupted' if signum == signal.SIGINT else f'terminated ({signal.Signals(signum).name})'} "
        f"after {kept:g} of 60 s: a partial cell of the {kept} intervals")
    counts = [decode(h).get_total_count() for h in cell.notes["interval_histograms"]]
    assert all(counts) and sum(counts) == cell.notes["ops"] == decode(cell.notes["histogram"]).get_total_count()
    assert list(cell.metrics["ops_per_s"].samples) == [float(c) for c in counts]  # one-second intervals
    assert [c["fatal"] for c in cell.notes["clients"]] == [f"stopped by {signal.Signals(signum).name}"] * 2


def test_a_load_of_go_clients_stopped_by_sigterm_keeps_the_seconds_they_spilled(
        server_url: Callable[[str], str], tmp_path: Path, go_program: Callable[[str], Path]) -> None:
    # Issue 27, item 6, for Go clients: they end with the command's process group and send no report, so the
    # partial cell comes from the seconds they spilled. It kept none before.
    go_program("stratabench-go")
    url = server_url("redis")
    output = tmp_path / "load.jsonl"
    process = start_load(url, output, lang="go")
    try:
        spill = two_seconds_spilled(process.pid)
        os.killpg(process.pid, signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err and f"results so far: {output}" in err, err
    assert not load_namespaces(url)
    (cell,) = load(output).cells
    assert cell.status == "failed" and cell.notes["partial"] is True
    kept = len(cell.notes["interval_histograms"])
    assert 2 <= kept < 60 and cell.error == (
        f"terminated (SIGTERM) after {kept:g} of 60 s: a partial cell of the {kept} intervals every client finished")
    counts = [decode(h).get_total_count() for h in cell.notes["interval_histograms"]]
    assert all(counts) and sum(counts) == cell.notes["ops"] == decode(cell.notes["histogram"]).get_total_count()


def spill_of(pid: int) -> Path:
    """Where the load command ``pid`` spills its clients' seconds: ``load-spill`` in its temporary root."""
    (root,) = scratch_base().glob(f"*-{pid}")
    return root / SPILL_DIR


def two_seconds_spilled(pid: int) -> Path:
    """The spill of load command ``pid`` once each of its two clients has spilled two whole seconds."""
    spill = spill_of(pid)
    deadline = time.monotonic() + 300  # a guard against a hang, not a measure: a loaded machine is slow
    while min(whole_lines(client_file(spill, i)) for i in range(2)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert min(whole_lines(client_file(spill, i)) for i in range(2)) >= 2, "no second was spilled"
    return spill


def whole_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


@pytest.mark.parametrize("lang", ["python", "go"])
def test_the_seconds_of_a_load_killed_with_kill_9_are_kept_by_the_next_command(
        server_url: Callable[[str], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], go_program: Callable[[str], Path], lang: str,
        request: pytest.FixtureRequest) -> None:
    # Issue 27, item 6: kill -9 kept no cell, though its clients had measured seconds. Each client now writes
    # each finished second to the command's temporary directory, and the next command keeps them.
    if lang == "go":
        go_program("stratabench-go")
    # A temporary directory of the test's own, so no other spill is found there; short, since multiprocessing's
    # fork server binds a socket inside it and a socket's path has at most 107 bytes (a fresh clone's pytest
    # directory was too long: "AF_UNIX path too long").
    scratch = Path(tempfile.mkdtemp(prefix="sb-", dir="/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(scratch, ignore_errors=True))
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    url = server_url("redis")
    output = tmp_path / "load.jsonl"
    process = start_load(url, output, lang=lang)
    try:
        spill = two_seconds_spilled(process.pid)
        # A spill of a command that still runs is left alone.
        assert recover_killed_loads("a test") == [] and (spill / "configuration.json").is_file()
        family = {process.pid, *(child.pid for child in psutil.Process(process.pid).children(recursive=True))}
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        deadline = time.monotonic() + 30
        while any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in family) \
                and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    # What is on disk once every client is dead, and a torn last line, as a kill in the middle of a write leaves.
    with client_file(spill, 0).open("ab") as torn:
        torn.write(b'{"index":0,"interval":9999,"histogram":"HIST')
    seconds = [spilled_seconds(client_file(spill, i)) for i in range(2)]
    kept = min(len(s) for s in seconds)
    assert kept >= 2
    expected = [merge(s[i]["histogram"] for s in seconds) for i in range(kept)]
    mine = tmp_path / "load.recovered.jsonl"  # a file of the user's where the recovered cell would go
    mine.write_text("mine\n")
    assert main(["clean", "--store", url]) == 0
    err = capsys.readouterr().err
    recovered = tmp_path / "load.recovered-2.jsonl"
    assert (f"a killed `stratabench load` (get/c2/closed{'' if lang == 'python' else '/go'}): kept the {kept} s every client finished, as a partial "
            f"cell: {recovered}") in err, err
    assert mine.read_text() == "mine\n", "an existing file was overwritten"
    assert not spill.exists(), "the spill was recovered, so it is removed"
    assert not load_namespaces(url), "clean removed the keys, as ever"
    (cell,) = load(recovered).cells
    assert cell.status == "failed" and cell.notes["partial"] is True
    assert cell.notes["recovered_by"] == "stratabench clean"
    assert cell.error == (f"killed (kill -9 or a crash; recovered by stratabench clean) after {kept:g} of 60 s: "
                          f"a partial cell of the {kept} intervals every client finished")
    intervals = [decode(h) for h in cell.notes["interval_histograms"]]
    assert len(intervals) == kept and all(got.equals(want) for got, want in zip(intervals, expected, strict=True))
    assert cell.notes["ops"] == sum(h.get_total_count() for h in expected) > 0
    assert [c["fatal"] for c in cell.notes["clients"]] == ["killed; recovered by stratabench clean"] * 2
    # Once recovered, nothing is left to recover.
    assert recover_killed_loads("a test") == []
