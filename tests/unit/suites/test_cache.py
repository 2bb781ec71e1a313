"""The cache suite in-process on embedded tiers: cells, integrity, metrics, faults, tables, verdicts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stratabench.engine.cell import run_cell_in_process
from stratabench.engine.measure import measure_operation
from stratabench.engine.operation import CellSpec
from stratabench.engine.sampling import RoundPlan
from stratabench.errors import StoreError, UnknownNameError, UsageError
from stratabench.options import EngineOptions, RunOptions
from stratabench.results.records import CellResult, MetricResult
from stratabench.run_shared import SHARED_DIR_ENV
from stratabench.suites.cache.claims import findings
from stratabench.suites.cache.report import cache_tables
from stratabench.suites.cache.suite import DEFAULT_MIN_SAMPLE_NS, CacheSuite
from stratabench.suites.cache.tiers import ready_access
from stratabench.suites.kit.reports import tables_of

FAST = EngineOptions(samples=2, warmups=0, min_sample_ns=1_000_000, memory_samples=1, isolate=False)
SECRET = "s3cret-Pa55"


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATABENCH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "datasets"))


def suite(**options: object) -> CacheSuite:
    values: dict[str, object] = {"suites": ("cache",), "size": 30, "engine": FAST, "run_id": "unit"}
    values.update(options)
    return CacheSuite(RunOptions(**values))  # type: ignore[arg-type]


def cell(name: str, **options: object) -> tuple[CellSpec, RunOptions]:
    s = suite(**options)
    (found,) = [c for c in s.cells() if c.name == name]
    return found, s.options


def run(name: str, **options: object) -> CellResult:
    spec, opts = cell(name, **options)
    return run_cell_in_process(spec, opts)


def test_default_cells_cover_memory_and_sqlite_with_every_encoding_and_compression() -> None:
    cells = suite().cells()
    names = {c.name for c in cells}
    assert len(cells) == 2 * (1 + 3 * 4) * 4
    assert {"get_one memory ready", "get_list sqlite rows", "set_list memory protobuf+zlib",
            "get_one sqlite blob:msgpack+lz4"} <= names
    assert not any("ready" in n and "sqlite" in n for n in names) and not any("rows" in n and "memory" in n for n in names)
    assert {c.params["tier"] for c in cells} == {"memory", "sqlite"}
    assert {c.params["dataset"] for c in cells if c.params["operation"].endswith("one")} == {"article"}


def test_server_urls_add_tiers_without_their_passwords() -> None:
    stores = ("redis://127.0.0.1:1/0", f"postgresql://u:{SECRET}@127.0.0.1:2/db", "mysql://u:x@127.0.0.1:3/db",
              "memcached://127.0.0.1:4", "memcached://127.0.0.1:5", "mongodb://127.0.0.1:6")
    cells = suite(stores=stores).cells()
    assert [t.label for t in suite(stores=stores).tiers()] == [
        "memory", "sqlite", "memcached", "memcached#2", "redis", "postgresql", "mariadb"]
    assert "get_list postgresql rows" in {c.name for c in cells}
    assert SECRET not in repr([c.to_json() for c in cells])


def test_subsets_and_unknown_names() -> None:
    cells = suite(codecs=("json",), compressors=("none",), settings={"cache.tiers": "memory",
                                                                     "cache.operations": "get_one"}).cells()
    assert [c.name for c in cells] == ["get_one memory ready", "get_one memory json+none"]
    with pytest.raises(UnknownNameError):
        suite(codecs=("nope",)).cells()
    with pytest.raises(UsageError, match="cache.tiers: no tier redis"):
        suite(settings={"cache.tiers": "redis"}).cells()
    with pytest.raises(UsageError, match="cache.operations"):
        suite(settings={"cache.operations": "fill"}).cells()


@pytest.mark.parametrize("name", [
    "get_one memory ready", "get_list memory ready", "get_list memory protobuf+zlib", "get_one memory pickle+none",
    "get_one sqlite rows", "get_list sqlite rows", "get_list sqlite blob:msgpack+zstd", "get_one sqlite blob:pickle+lz4",
])
def test_reads_verify_the_dataset_hash_and_record_each_metric(name: str) -> None:
    result = run(name)
    assert result.ok, result.error
    assert result.integrity is not None and result.integrity.ok
    expected = {"wall_ns", "cpu_ns", "alloc_bytes"}
    if "ready" not in name:
        expected.add("size_bytes")
    if "memory" in name:
        expected.add("retained_bytes")
    if "+" in name:
        expected.add("decode_ns")
    if "+" in name and "+none" not in name:
        expected.add("decompress_ns")
    assert expected <= set(result.metrics), sorted(result.metrics)
    assert "server_cpu_ns" not in result.metrics  # in-process tiers: no server, never a 0


@pytest.mark.parametrize("name", ["set_one memory ready", "set_list memory msgpack+zlib", "set_list sqlite rows",
                                  "set_one sqlite blob:protobuf+none"])
def test_writes_are_checked_by_reading_back(name: str) -> None:
    result = run(name)
    assert result.ok, result.error
    assert result.integrity is not None and result.integrity.ok


def test_a_sqlite_write_cell_checkpoints_before_each_sample_never_inside_one(tmp_path: Path) -> None:
    # The article with lz4 logs about 11 pages a write, and SQLite checkpointed in the commit that passed 1,000:
    # the 91st write of a fresh file, inside the second of two samples of 67 (docs/studies/cache.md §4). Exact:
    # the write after a checkpoint restarts the log, and the -wal file's header counts the restarts.
    spec, opts = cell("set_one sqlite blob:protobuf+lz4")
    operation = CacheSuite(opts).prepare(spec, tmp_path)
    wal = tmp_path / "cache.db-wal"
    samples: list[list[int]] = []  # the log's restarts after each write, by sample
    write, upkeep = operation.call, operation.before_sample
    assert upkeep is not None and "upkeep" in operation.notes

    def logged_write() -> object:
        write()
        samples[-1].append(int.from_bytes(wal.read_bytes()[12:16], "big"))
        return None

    def logged_upkeep() -> None:
        upkeep()
        samples.append([])

    operation.call, operation.before_sample = logged_write, logged_upkeep
    try:
        measure_operation(operation, operation.engine or opts.engine, plan=RoundPlan(1, 67, 2, False))
    finally:
        if operation.close is not None:
            operation.close()
    # The upkeep before each sample restarted the log once; none of the sample's 67 writes did.
    assert [len(set(sample)) for sample in samples] == [1, 1] and samples[1][0] == samples[0][0] + 1
    assert [len(sample) for sample in samples] == [67, 67]


def test_sizes_and_compression() -> None:
    plain, packed = run("get_one memory pickle+none"), run("get_one memory pickle+zlib")
    assert 55_000 < plain.median("size_bytes") < 65_000  # type: ignore[operator]
    assert 2.5 < plain.median("size_bytes") / packed.median("size_bytes") < 4  # type: ignore[operator]
    assert packed.notes["compressor"] == "zlib" and packed.notes["level"] == 6
    rows = run("get_list sqlite rows")
    assert rows.notes["query"].startswith('SELECT "id"') and "LIMIT ?" in rows.notes["query"]


def test_a_missing_package_makes_its_cells_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "zstandard", None)
    result = run("get_one memory msgpack+zstd")
    assert result.status == "unavailable" and "zstandard" in (result.error or "") and "\n" not in (result.error or "")
    assert run("get_one memory msgpack+lz4").ok  # the others still run


def test_a_miss_is_an_error_not_a_fast_read() -> None:
    access = ready_access([(1,)])
    access.close()
    with pytest.raises(StoreError, match="cache miss"):
        access.read()


def test_the_suite_lowers_the_calibration_target_unless_told() -> None:
    from stratabench.engine.operation import Operation

    spec, opts = cell("get_one memory ready", engine=EngineOptions(samples=3, min_sample_ns=100_000_000))
    operation: Operation = CacheSuite(opts).prepare(spec, Path("/nonexistent"))
    assert operation.engine is not None and operation.engine.min_sample_ns == DEFAULT_MIN_SAMPLE_NS < 100_000_000
    assert operation.engine.samples == 3
    spec, opts = cell("get_one memory ready", settings={"cache.min_time": "0.5"})
    assert CacheSuite(opts).prepare(spec, Path("/nonexistent")).engine.min_sample_ns == 500_000_000  # type: ignore[union-attr]


def test_embedded_run_tables_say_which_findings_need_a_server() -> None:
    s = suite(codecs=("protobuf",), compressors=("none", "zlib"), settings={"cache.operations": "get_one,get_list"})
    results = [run_cell_in_process(c, s.options) for c in s.cells()]
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    from stratabench.report.formats import REPORTERS

    tables = tables_of(s.name, results, s.options)
    text = " ".join(REPORTERS.get("terminal")().render(tables).split())  # notes are wrapped
    rows = [row for table in tables for row in table.rows]
    assert any(row.get("cell") == "instance memory + protobuf + zlib" for row in rows)  # wrapped in the text
    assert any(row.get("status") == "not measured: needs memcached" for row in rows)
    assert "stratabench run cache --services local" in text
    verdicts = {f.id: f.verdict for f in findings(results)}
    assert {verdicts[f] for f in ("F2", "F3", "F4", "F5", "F6", "F7", "F8")} == {"not measured: needs a server"}
    assert verdicts["F1"] == "not measured: needs a server"  # no remote cache to compare the database with
    assert verdicts["F9"] != "not measured"
    assert "compression achieved on the article: protobuf" in text


# -- verdicts on synthetic results --------------------------------------------------------


def result(tier: str, rep: str, encoding: str, compression: str, operation: str, wall: list[float],
           cpu: list[float] | None = None, server: list[float] | None = None) -> CellResult:
    kind = tier
    metrics = {"wall_ns": MetricResult.of(wall), "cpu_ns": MetricResult.of(cpu or wall)}
    if server is not None:
        metrics["server_cpu_ns"] = MetricResult.of(server)
    params = {"tier": tier, "kind": kind, "representation": rep, "encoding": encoding, "compression": compression,
              "operation": operation, "dataset": "article" if operation.endswith("one") else "comments"}
    return CellResult("cache", f"{operation} {tier} {encoding}", params, "python", "ok", loops=1, metrics=metrics)


def around(value: float) -> list[float]:
    return [value * 0.99, value, value * 1.01]


def test_f2_follows_the_numbers() -> None:
    def verdict(db_ns: float, mc_ns: float, mc_server: float) -> str:
        results = [result("postgresql", "rows", "rows", "none", "get_one", around(db_ns)),
                   result("memcached", "value", "pickle", "none", "get_one", around(mc_ns), around(mc_ns / 2),
                          around(mc_server))]
        return {f.id: f.verdict for f in findings(results)}["F2"]

    assert verdict(400_000, 180_000, 10_000) == "reproduced"
    assert verdict(180_000, 400_000, 10_000) == "refuted"
    assert verdict(400_000, 399_000, 10_000) == "too close to call"


def test_f3_needs_the_cpu_claim_too() -> None:
    def verdict(db_cpu: float) -> str:
        results = [result("sqlite", "rows", "rows", "none", "get_list", around(3e6), around(db_cpu)),
                   result("memcached", "value", "pickle", "none", "get_list", around(1e6), around(1e5), around(1e5))]
        return {f.id: f.verdict for f in findings(results)}["F3"]

    assert verdict(4e6) == "reproduced"  # 20× the CPU of client+server: at least 15/3
    assert verdict(5e5) == "refuted"  # 2.5×: faster, but not far cheaper


def test_f6_is_about_the_time_saved_and_f7_about_the_factor() -> None:
    def verdicts(memcached_ns: float) -> dict[str, str]:
        results = [result("memory", "ready", "ready", "none", op, around(100)) for op in ("get_one", "get_list")]
        results += [result("memcached", "value", "pickle", "none", op, around(memcached_ns))
                    for op in ("get_one", "get_list")]
        return {f.id: f.verdict for f in findings(results)}

    assert verdicts(200_000)["F6"] == "reproduced" and verdicts(200_000)["F7"] == "reproduced"
    assert verdicts(5_000_000)["F6"] == "refuted"
    assert verdicts(2_000)["F7"] == "refuted"  # 20×: not within a third of the article's 100×


def test_failed_cells_are_reported_once_per_reason() -> None:
    ok = result("memory", "ready", "ready", "none", "get_one", around(100))
    bad = [CellResult.failure(CellSpec("cache", f"get_one redis pickle+{c}", {"tier": "redis", "kind": "redis",
                                                                            "representation": "value",
                                                                            "encoding": "pickle", "compression": c,
                                                                            "operation": "get_one"}),
                              "failed", "cannot connect to redis at 127.0.0.1:1: refused") for c in
           ("none", "zlib", "zstd", "lz4")]
    tables = cache_tables([ok, *bad], RunOptions())
    notes = "\n".join(tables[0].notes)
    assert notes.count("cannot connect to redis") == 1 and "4 cells" in notes
    assert any(row.get("status") == "failed" for row in tables[0].rows)


def test_an_entrys_bytes_are_made_once_for_the_run_and_every_visit_stores_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each visit encoded its own entry (zlib on the 1,000 comments: 23 ms a visit); the run's shared directory
    # keeps the first visit's bytes, and a get and a set of the same entry on both tiers store those.
    shared = tmp_path / "shared"
    shared.mkdir()
    monkeypatch.setenv(SHARED_DIR_ENV, str(shared))
    stored: list[bytes] = []
    for name in ("get_one memory pickle+zlib", "set_one sqlite blob:pickle+zlib"):
        spec, opts = cell(name)
        workdir = tmp_path / name.replace(" ", "_").replace(":", "_")
        workdir.mkdir()
        operation = CacheSuite(opts).prepare(spec, workdir)
        try:
            assert operation.size_bytes is not None
            [made] = shared.glob("cache-pickle-zlib-*.bin")
            stored.append(made.read_bytes())
            assert len(stored[-1]) == operation.size_bytes
        finally:
            if operation.close is not None:
                operation.close()
    assert stored[0] == stored[1]
