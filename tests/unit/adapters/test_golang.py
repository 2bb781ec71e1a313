"""Tests of stratabench.adapters.golang against the real Go programs."""

from __future__ import annotations

import hashlib
import re
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from stratabench.adapters import golang
from stratabench.results.records import CellResult

HASH_1000 = "f95cc302db8529e5daabc7211c27616afbe832ba"
FORMATS = ["embed", "json", "gob", "msgp", "msgpack", "msgpack5", "go-json", "jsoniter", "sonic", "segmentio-json",
           "cbor", "bson", "avro", "protobuf", "flatbuffers", "arrow", "xml"]


@pytest.fixture(scope="module")
def built(go_program: Callable[[str], Path]) -> Path:
    return go_program("stratabench-go")


def test_binary_path_default_and_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(golang.BIN_DIR_ENV, raising=False)
    assert golang.binary_path() == golang.REPO_ROOT / ".build" / "go" / "stratabench-go"
    monkeypatch.setenv(golang.BIN_DIR_ENV, str(tmp_path))
    assert golang.binary_path("stratabench-mongo") == tmp_path / "stratabench-mongo"


def test_missing_go_is_explained(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    ok, reason = golang.go_available()
    assert not ok
    assert reason.startswith("Go toolchain not found")
    with pytest.raises(golang.GoUnavailableError, match="Go toolchain not found"):
        golang.build()


def test_unbuilt_binary_is_explained(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(golang.BIN_DIR_ENV, str(tmp_path))
    with pytest.raises(golang.GoUnavailableError, match="not built"):
        golang.info()


@pytest.mark.slow
def test_info(built: Path) -> None:
    data = golang.info()
    assert data["formats"] == FORMATS
    assert data["go_version"].startswith("go")
    assert data["gomaxprocs"] >= 1


@pytest.mark.slow
def test_run_bulkload_every_format_hashes(built: Path, tmp_path: Path) -> None:
    cells = list(
        golang.run_bulkload(
            seed=100,
            size=1000,
            workdir=tmp_path,
            formats=FORMATS,
            variants=["warm", "fresh", "encode"],
            benchtime="10ms",
            count=1,
            timeout=300,
        )
    )
    # Every format both ways, but embed's encode, which is its build.
    assert [(c["format"], c["variant"]) for c in cells] == [
        (f, v) for f in FORMATS for v in ("warm", "fresh", "encode") if (f, v) != ("embed", "encode")
    ]
    for cell in cells:
        assert cell["error"] is None, cell
        assert cell["hash"] == HASH_1000, cell
        assert len(cell["samples"]["wall_ns"]) == 1
        assert cell["loops"] >= 1
    embed = cells[0]["extra"]
    for key in ("compile_ns", "compile_peak_rss_bytes", "binary_size_bytes", "init_ns"):
        assert embed[key] is not None


@pytest.mark.slow
def test_run_bulkload_measures_the_cells_named_with_their_loop_counts(built: Path, tmp_path: Path) -> None:
    lines = list(golang.run_bulkload(seed=100, size=10, workdir=tmp_path, formats="json", variants="warm",
                                     benchtime="3x", count=1, cells=["gob/encode", "json/fresh"],
                                     loops={"json/fresh": 5}))
    # The cells named, not formats x variants; a fixed count in place of the benchtime where given.
    assert [(line["format"], line["variant"], line["loops"]) for line in lines] == [("gob", "encode", 3),
                                                                                   ("json", "fresh", 5)]
    # Freed heap stays mapped (MADV_FREE): the program ran with the runtime setting, and says so.
    assert {line["extra"]["godebug"] for line in lines} == {"madvdontneed=0"}


def test_the_bulkload_program_s_godebug_comes_first_so_the_caller_s_own_wins() -> None:
    assert golang.bulkload_env({"PATH": "/bin"}) == {"PATH": "/bin", "GODEBUG": "madvdontneed=0"}
    assert golang.bulkload_env({"GODEBUG": "madvdontneed=1,gctrace=1"})["GODEBUG"] == \
        "madvdontneed=0,madvdontneed=1,gctrace=1"


@pytest.mark.slow
def test_unknown_format_raises(built: Path, tmp_path: Path) -> None:
    with pytest.raises(golang.GoRunError, match="unknown format"):
        list(
            golang.run_bulkload(
                seed=100, size=10, workdir=tmp_path, formats="json,yaml", variants="warm"
            )
        )


@pytest.mark.slow
def test_export_json_is_canonical(built: Path, tmp_path: Path) -> None:
    out = golang.export("json", 100, 1000, tmp_path / "list.json")
    assert hashlib.sha1(out.read_bytes()).hexdigest() == HASH_1000


@pytest.mark.slow
def test_stopping_early_ends_the_program(built: Path, tmp_path: Path) -> None:
    cells = golang.run_bulkload(
        seed=100, size=100, workdir=tmp_path, formats="json,gob", variants="warm",
        benchtime="1x", count=1,
    )  # fmt: skip
    first = next(cells)
    assert first["format"] == "json"
    cells.close()


@pytest.mark.slow
def test_mongo_server_round_trip(tmp_path: Path, go_program: Callable[[str], Path]) -> None:
    import pymongo

    proc = subprocess.Popen(
        [str(go_program("stratabench-mongo")), "--listen", "127.0.0.1:0", "--dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert re.fullmatch(r"ready mongodb://127\.0\.0\.1:\d+/\n", line), line
        client = pymongo.MongoClient(line.split()[1], serverSelectionTimeoutMS=10_000)
        try:
            client["stratabench_t"]["c"].insert_one({"_id": 1, "v": "x"})
            assert client["stratabench_t"]["c"].find_one({"_id": 1}) == {"_id": 1, "v": "x"}
        finally:
            client.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err


def test_mongo_refuses_non_loopback(tmp_path: Path, go_program: Callable[[str], Path]) -> None:
    path = go_program("stratabench-mongo")
    proc = subprocess.run(
        [str(path), "--listen", "0.0.0.0:27017", "--dir", str(tmp_path)],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "non-loopback" in proc.stderr and proc.stdout == ""


def test_the_cache_directory_follows_its_variable_then_xdg_then_home(monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:
    from stratabench.build_cache import CACHE_DIR_ENV, cache_root

    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "mine"
    monkeypatch.delenv(CACHE_DIR_ENV)
    assert cache_root() == tmp_path / "xdg" / "stratabench"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_root() == Path.home() / ".cache" / "stratabench"


def test_a_content_key_changes_with_any_part_or_byte_and_not_with_the_checkout(tmp_path: Path) -> None:
    from stratabench.build_cache import content_key

    for checkout in ("a", "b"):
        (tmp_path / checkout).mkdir()
        (tmp_path / checkout / "main.go").write_text("package main\n")
    key = content_key(["go1.24"], [tmp_path / "a" / "main.go"], root=tmp_path / "a")
    assert key == content_key(["go1.24"], [tmp_path / "b" / "main.go"], root=tmp_path / "b")
    assert key != content_key(["go1.25"], [tmp_path / "a" / "main.go"], root=tmp_path / "a")
    (tmp_path / "b" / "main.go").write_text("package main \n")
    assert key != content_key(["go1.24"], [tmp_path / "b" / "main.go"], root=tmp_path / "b")


def test_the_embed_build_is_keyed_by_size_and_seed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from stratabench.build_cache import CACHE_DIR_ENV

    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    keys = {golang.embed_cache_dir(size, seed) for size, seed in ((10, 100), (11, 100), (10, 101))}
    assert len(keys) == 3 and all(key.parent == tmp_path / "go-embed" for key in keys)
    assert golang.embed_cache_dir(10, 100) == golang.embed_cache_dir(10, 100)


@pytest.mark.slow
def test_a_program_is_rebuilt_only_when_its_sources_changed_or_asked(built: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    monkeypatch.setenv(golang.BIN_DIR_ENV, str(tmp_path))
    binary, stamp = tmp_path / "stratabench-go", tmp_path / "stratabench-go.key"
    golang.ensure_built()  # missing: built
    first = binary.stat().st_mtime_ns
    golang.ensure_built()  # same sources, same Go: kept
    assert binary.stat().st_mtime_ns == first
    stamp.write_text("built from other sources\n")
    golang.ensure_built()  # a stale key: rebuilt
    second = binary.stat().st_mtime_ns
    assert second != first and stamp.read_text().strip() != "built from other sources"
    golang.ensure_built(rebuild=True)  # --rebuild
    assert binary.stat().st_mtime_ns != second


@pytest.mark.slow
def test_the_embed_build_is_measured_once_then_reused_with_its_recorded_cost(built: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "key"

    def embed_run(workdir: str) -> dict[str, object]:
        (line,) = golang.run_bulkload(seed=100, size=10, workdir=tmp_path / workdir, formats="embed",
                                      variants="warm", benchtime="1x", count=1, timeout=900, embed_cache=cache)
        assert line["error"] is None, line
        extra: dict[str, object] = line["extra"]
        return extra

    miss = embed_run("first")
    assert miss["build_cached"] is False and (cache / "build.json").exists()
    hit = embed_run("second")
    assert hit["build_cached"] is True and hit["built_at"]
    assert hit["compile_ns"] == miss["compile_ns"] and hit["binary_size_bytes"] == miss["binary_size_bytes"]


@pytest.mark.slow
def test_rebuild_drops_the_cached_embed_build(built: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from stratabench.build_cache import CACHE_DIR_ENV
    from stratabench.engine.operation import CellSpec
    from stratabench.options import RunOptions
    from stratabench.suites.bulkload.suite import BulkloadSuite

    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    entry = golang.embed_cache_dir(10, 100)
    entry.mkdir(parents=True)
    (entry / "build.json").write_text("{}")
    cells = [CellSpec("bulkload", "go json/warm", {"format": "json", "variant": "warm"}, "go")]
    settings = {"go.count": "1", "go.processes": "1", "go.benchtime": "1x"}

    def run(rebuild: bool) -> list[CellResult]:
        bulkload = BulkloadSuite(RunOptions(suites=("bulkload",), size=10, rebuild=rebuild, settings=settings))
        return list(bulkload.run_external(cells, tmp_path))

    kept = run(rebuild=False)
    assert kept[0].ok and entry.exists()
    rebuilt = run(rebuild=True)
    assert rebuilt[0].ok and not entry.exists()


@pytest.mark.slow
def test_the_program_and_its_go_build_end_when_the_caller_is_killed(built: Path, tmp_path: Path) -> None:
    # stratabench-go runs in a session of its own, out of reach of a signal
    # to the caller's group: the pipe on its stdin is what tells it.
    import sys
    import textwrap
    import time

    import psutil

    script = textwrap.dedent(f"""
        from stratabench.adapters import golang
        for cell in golang.run_bulkload(seed=100, size=20000, workdir={str(tmp_path)!r}, formats="embed",
                                        variants="warm", benchtime="1x", count=1):
            pass
    """)
    caller = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        tree: list[psutil.Process] = []
        while not any(p.name() == "go" for p in tree):  # the embed cell's `go build` is running
            assert caller.poll() is None and time.monotonic() < deadline, "no go build started"
            time.sleep(0.05)
            try:
                tree = psutil.Process(caller.pid).children(recursive=True)
            except psutil.NoSuchProcess:
                tree = []
        caller.kill()
        caller.wait()
        time.sleep(2)
        left = []
        for process in tree:
            try:
                if process.status() != psutil.STATUS_ZOMBIE:
                    left.append(f"{process.pid} {process.name()}")
            except psutil.NoSuchProcess:
                pass
        assert left == [], f"alive 2 s after the caller was killed: {left}"
    finally:
        if caller.poll() is None:
            caller.kill()
            caller.wait()
