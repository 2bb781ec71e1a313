"""The cache and matrix suites against real local servers started by stratabench's services code.

Round-trip integrity and the presence of each metric on every server tier
(never speeds); a value over memcached's item limit; a server killed between
cells; and no password in any output.
"""

from __future__ import annotations

import io
import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from stratabench.cli.progress import LineProgress
from stratabench.engine.cell import run_cell, run_cell_in_process
from stratabench.engine.operation import CellSpec
from stratabench.engine.runner import execute
from stratabench.options import EngineOptions, RunOptions
from stratabench.redact import password_of
from stratabench.results.format import header_record, load
from stratabench.results.records import CellResult
from stratabench.results.writer import ResultsWriter
from stratabench.services.session import LocalServices, local_services
from stratabench.suites.cache.suite import CacheSuite
from stratabench.suites.kit.plan import plan_run
from tests.availability import unavailable

pytestmark = pytest.mark.server

FAST = EngineOptions(samples=2, warmups=0, min_sample_ns=1_000_000, memory_samples=1, isolate=False)
KINDS = {"memcached": "memcached", "redis": "redis", "postgresql": "postgresql", "mariadb": "mariadb"}


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATABENCH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "datasets"))


def options(url: str, tier: str, **changes: object) -> RunOptions:
    values: dict[str, object] = {"suites": ("cache",), "size": 40, "stores": (url,), "engine": FAST,
                                 "run_id": f"it-{os.getpid()}", "settings": {"cache.tiers": tier}}
    values.update(changes)
    return RunOptions(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize("service", list(KINDS))
def test_every_cell_of_a_server_tier_round_trips(service: str, server_url: Callable[[str], str]) -> None:
    opts = options(server_url(service), KINDS[service], codecs=("pickle", "protobuf"), compressors=("none", "zlib"))
    cells = CacheSuite(opts).cells()
    expected_cells = (1 if service in ("postgresql", "mariadb") else 0) + 4
    assert len(cells) == expected_cells * 4
    for cell in cells:
        result = run_cell_in_process(cell, opts)
        assert result.ok, f"{cell.name}: {result.error}"
        assert result.integrity is not None and result.integrity.ok, cell.name
        assert {"wall_ns", "cpu_ns", "server_cpu_ns", "size_bytes", "alloc_bytes"} <= set(result.metrics), (
            cell.name, sorted(result.metrics))
        if cell.params["operation"].startswith("get") and cell.params["representation"] != "rows":
            assert "decode_ns" in result.metrics


def test_a_cell_in_its_own_worker_process_finds_the_servers_pids(server_url: Callable[[str], str]) -> None:
    opts = options(server_url("memcached"), "memcached", codecs=("msgpack",), compressors=("lz4",),
                   settings={"cache.tiers": "memcached", "cache.operations": "get_list"},
                   engine=EngineOptions(samples=2, warmups=0, min_sample_ns=1_000_000, isolate=True))
    (cell,) = CacheSuite(opts).cells()
    result = run_cell(cell, opts)
    assert result.ok, result.error
    assert result.median("server_cpu_ns") is not None


def test_nothing_is_left_behind(server_url: Callable[[str], str]) -> None:
    import redis

    url = server_url("redis")
    opts = options(url, "redis", codecs=("pickle",), compressors=("none",))
    for cell in CacheSuite(opts).cells():
        assert run_cell_in_process(cell, opts).ok
    client = redis.Redis.from_url(url)
    try:
        assert list(client.scan_iter(match=f"sb:it-{os.getpid()}.cache.*")) == []
    finally:
        client.close()


def test_a_value_over_memcacheds_item_limit_is_unsupported_and_compressed_it_fits(
        server_url: Callable[[str], str]) -> None:
    opts = options(server_url("memcached"), "memcached", size=4000, codecs=("pickle",), compressors=("none", "zlib"),
                   settings={"cache.tiers": "memcached", "cache.operations": "get_list,set_list"})
    results = {cell.name: run_cell_in_process(cell, opts) for cell in CacheSuite(opts).cells()}
    for name in ("get_list memcached pickle+none", "set_list memcached pickle+none"):
        assert results[name].status == "unsupported"
        assert "exceeds memcached's item limit" in (results[name].error or "")
        assert results[name].error and "\n" not in results[name].error
    assert results["get_list memcached pickle+zlib"].ok, results["get_list memcached pickle+zlib"].error


class KillAfter(LineProgress):
    """Kills a server when a cell of its tier is about to be measured a second time (between two measurements).

    Cells are measured in rounds: by then one measurement of the tier has succeeded, and every cell of the tier
    still has a round to take, which the dead server must fail.
    """

    def __init__(self, tier: str, pid: int) -> None:
        super().__init__(io.StringIO())
        self.tier, self.pid, self.killed = tier, pid, False
        self.tier_starts = 0

    def cell_started(self, spec: CellSpec) -> None:
        super().cell_started(spec)
        if self.killed or spec.params.get("tier") != self.tier:
            return
        self.tier_starts += 1
        if self.tier_starts == 2:
            os.kill(self.pid, signal.SIGKILL)
            self.killed = True
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    os.kill(self.pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)


@pytest.mark.parametrize("service", ["redis", "postgresql"])
def test_a_server_killed_mid_run_fails_only_its_own_cells(service: str, services_state: str, tmp_path: Path) -> None:
    with local_services([service]) as running:
        server = running[service]
        opts = options(server.url, f"memory,{service}", codecs=("pickle", "msgpack"), compressors=("none",),
                       settings={"cache.tiers": f"memory,{service}", "cache.operations": "get_one,set_list"})
        progress = KillAfter(service, server.pids[0])
        plan = plan_run(opts, progress)
        path = tmp_path / "results.jsonl"
        with ResultsWriter(path, header_record(opts.run_id, "now", {}, opts.to_json())) as writer:
            results = execute(plan, opts, writer, progress)
        assert progress.killed
    mine = [r for r in results if r.params["tier"] == service]
    others = [r for r in results if r.params["tier"] != service]
    assert others and all(r.ok for r in others), [r.error for r in others if not r.ok]
    # A cell that still needed a round when its server died fails, with a one-line reason; the other tier's
    # cells, measured in the same rounds, keep their results.
    assert len(mine) > 2 and all(r.status == "failed" for r in mine)
    for r in mine:
        assert r.error and "\n" not in r.error and service in r.error and ("connect" in r.error or "failed" in r.error)
    on_disk = load(path)
    # The file holds each cell as it finished (rounds end cells in their own order); the run returns plan order.
    assert sorted(c.cell for c in on_disk.cells) == sorted(r.cell for r in results)
    by_name = {c.cell: c for c in on_disk.cells}
    assert all(by_name[r.cell].metrics == r.metrics for r in results)


def test_no_password_in_any_output(local_servers: LocalServices, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    from stratabench.cli.main import main

    if "postgresql" not in local_servers:
        unavailable("no postgresql server: the password test needs one")
    url = local_servers["postgresql"].url
    password = password_of(url)
    assert password
    out = tmp_path / "results.jsonl"
    wrong = url.replace(f":{local_servers['postgresql'].port}/", ":1/")  # a URL with the password, unreachable
    code = main(["run", "cache", "--store", url, "--store", wrong, "--codec", "pickle", "--compressor", "none",
                 "--size", "20", "--samples", "2", "--min-time", "0.001", "--in-process",
                 "--set", "cache.tiers=postgresql,postgresql#2", "--set", "cache.operations=get_one", "-o", str(out)])
    captured = capsys.readouterr()
    assert code == 1  # the unreachable server's cells failed; the others ran
    text = captured.out + captured.err + out.read_text()
    assert password not in text
    assert "postgresql://stratabench:***@" in out.read_text()
    results = [r for r in map(json.loads, out.read_text().splitlines()) if r["type"] == "cell"]
    assert {r["params"]["tier"]: r["status"] for r in results} == {"postgresql": "ok", "postgresql#2": "failed"}
    assert "cannot connect" in next(r["error"] for r in results if r["status"] == "failed")


def test_the_matrix_on_a_users_file_against_servers(server_url: Callable[[str], str], tmp_path: Path) -> None:
    from stratabench.suites.matrix.suite import MatrixSuite

    path = tmp_path / "orders.jsonl"
    path.write_text("".join(json.dumps({"order": i, "customer": f"c{i % 7}", "total": i * 1.25, "paid": i % 2 == 0,
                                        "items": [f"sku-{j}" for j in range(i % 4)]}) + "\n" for i in range(25)))
    stores = tuple(server_url(name) for name in ("redis", "memcached", "postgresql", "mariadb"))
    opts = RunOptions(suites=("matrix",), data=str(path), stores=stores, codecs=("msgspec.msgpack", "protobuf"),
                      compressors=("zstd",), engine=FAST, run_id=f"it-{os.getpid()}")
    suite = MatrixSuite(opts)
    results = [run_cell_in_process(cell, opts) for cell in suite.cells() if cell.params["url"]]
    assert len(results) == 4 * 2 * 4
    assert all(r.ok and r.integrity and r.integrity.ok for r in results), [(r.cell, r.error) for r in results if not r.ok]
    assert all("server_cpu_ns" in r.metrics for r in results)
