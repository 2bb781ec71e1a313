"""The matrix suite in-process on files the test writes itself (not stratabench's generators)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratabench.cli.main import main
from stratabench.engine.cell import run_cell_in_process
from stratabench.errors import DataError, UsageError
from stratabench.options import EngineOptions, RunOptions
from stratabench.suites.kit.reports import tables_of
from stratabench.suites.matrix.report import matrix_answer
from stratabench.suites.matrix.suite import MatrixSuite, left_out

FAST = EngineOptions(samples=2, warmups=0, min_sample_ns=1_000_000, memory_samples=1, isolate=False)

JSONL = """{"id": 1, "name": "Ada Lovelace", "born": 1815, "score": 9.5, "active": true, "tags": ["math"], "note": null}
{"id": 2, "name": "Grace Hopper", "born": 1906, "score": 9.75, "active": false, "tags": [], "note": "COBOL"}
{"id": 3, "name": "\u00c9douard Lucas", "born": 1842, "score": -0.0, "active": true, "tags": ["towers", "hanoi"], "note": {"k": [1, 2.5]}}
"""
CSV = 'sku,price,stock,label,zip\nA-1,19.99,3,"red, large",01234\nB-2,5,0,blue,99501\nC-3,0.5,12,"say ""hi""",00501\n'


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATABENCH_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(params=["people.jsonl", "stock.csv"])
def data(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    path = tmp_path / request.param
    path.write_text(JSONL if request.param.endswith(".jsonl") else CSV, encoding="utf-8")
    return path


def suite(**options: object) -> MatrixSuite:
    values: dict[str, object] = {"suites": ("matrix",), "engine": FAST, "run_id": "unit"}
    values.update(options)
    return MatrixSuite(RunOptions(**values))  # type: ignore[arg-type]


def test_every_operation_on_every_embedded_store_verifies(data: Path) -> None:
    s = suite(data=str(data), codecs=("json", "msgpack"), compressors=("none", "zstd"),
              settings={"matrix.stores": "memory,sqlite"})
    cells = s.cells()
    assert len(cells) == 2 * 2 * 2 * 4
    results = [run_cell_in_process(cell, s.options) for cell in cells]
    assert all(r.ok for r in results), [(r.cell, r.error) for r in results if not r.ok]
    assert all(r.integrity is not None and r.integrity.ok for r in results)
    for r in results:
        assert {"wall_ns", "cpu_ns", "size_bytes"} <= set(r.metrics)
    text = "\n".join(str(row) for table in tables_of(s.name, results, s.options) for row in table.rows)
    assert "memory" in text and "sqlite" in text


def test_the_table_names_the_file_and_the_fastest(data: Path) -> None:
    from stratabench.report.formats import REPORTERS

    s = suite(data=str(data), codecs=("pickle",), compressors=("none",), settings={"matrix.operations": "get_many"})
    results = [run_cell_in_process(cell, s.options) for cell in s.cells()]
    text = REPORTERS.get("terminal")().render(tables_of(s.name, results, s.options))
    assert f"3 records from {data.name}" in text
    found = matrix_answer(results, s.options)
    assert found is not None and found.bests[0].label == "read many: fastest"
    fastest = min((r for r in results if r.ok), key=lambda r: r.median("wall_ns") or 0)
    assert found.bests[0].winners[0].name == f"pickle on {fastest.params['store']}" or found.bests[0].tie


def test_the_default_matrix_tries_everything_available_and_says_what_it_left_out(data: Path) -> None:
    from stratabench.layers.codecs import CODECS
    from stratabench.layers.compressors import COMPRESSORS

    cells = suite(data=str(data), settings={"matrix.operations": "get_many"}).cells()
    codecs = {c.params["codec"] for c in cells}
    assert {"orjson", "msgspec.msgpack", "cbor2"} <= codecs and "embed" not in codecs
    assert {c.params["compression"] for c in cells} == {i.name for i in COMPRESSORS if i.availability.ok}
    assert {"memory", "sqlite", "lmdb", "file"} <= {c.params["store"] for c in cells}
    lines = left_out(None, ["memory", "sqlite", "lmdb", "file"])
    assert any(line.startswith("codec embed: ") for line in lines)
    assert any(line.startswith("store redis: needs a server") for line in lines)
    fits = {i.name for i in CODECS if i.availability.ok and not i.cls.not_for_values}
    # Schema-typed codecs (protobuf, Avro, Arrow, Cap'n Proto, FlatBuffers) cannot declare a field of any type.
    typed_only = {i.name for i in CODECS if "any" in i.cls.unsupported_types}
    assert codecs <= fits and fits - codecs <= typed_only


def test_a_codec_that_cannot_carry_the_records_is_unavailable_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "people.jsonl"
    path.write_text(JSONL, encoding="utf-8")
    s = suite(data=str(path), codecs=("protobuf",), compressors=("none",), settings={"matrix.operations": "put"})
    results = [run_cell_in_process(cell, s.options) for cell in s.cells()]
    assert {r.status for r in results} == {"unavailable"}
    assert "field 'note' (any)" in (results[0].error or "")


def test_a_named_dataset(tmp_path: Path) -> None:
    s = suite(size=20, codecs=("cbor2",), compressors=("lz4",), settings={
        "matrix.dataset": "comments", "matrix.operations": "get_one,delete", "matrix.stores": "memory,sqlite"})
    results = [run_cell_in_process(cell, s.options) for cell in s.cells()]
    assert [r.cell for r in results] == ["get_one memory cbor2+lz4", "delete memory cbor2+lz4",
                                         "get_one sqlite cbor2+lz4", "delete sqlite cbor2+lz4"]
    assert all(r.ok for r in results), [r.error for r in results]


def test_records_are_needed() -> None:
    with pytest.raises(UsageError, match="--data FILE"):
        suite().cells()


@pytest.mark.parametrize("name, text, line", [("bad.jsonl", '{"a": 1}\n{"a": }\n', "line 2"),
                                              ("ragged.csv", "a,b\n1,2\n3,4,5\n", "line 3")])
def test_a_malformed_file_stops_the_run_before_measuring(tmp_path: Path, name: str, text: str, line: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DataError, match=f"{name}, {line}"):
        suite(data=str(path)).cells()


def test_the_command_line_on_a_users_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "stock.csv"
    path.write_text(CSV)
    out = tmp_path / "results.jsonl"
    code = main(["run", "matrix", "--data", str(path), "--codec", "orjson", "--compressor", "none", "--samples", "2",
                 "--min-time", "0.001", "--in-process", "-q", "-o", str(out)])
    assert code == 0
    assert "3 records from stock.csv" in capsys.readouterr().out
    assert path.read_text() == CSV  # the user's file is read, never written
    bad = tmp_path / "bad.jsonl"
    bad.write_text("[1]\n")
    assert main(["run", "matrix", "--data", str(bad), "-q", "-o", str(tmp_path / "r2.jsonl")]) == 65
    assert "bad.jsonl, line 1: expected a JSON object" in capsys.readouterr().err


@pytest.mark.parametrize("operation", ["put", "delete"])
def test_a_sqlite_write_checkpoints_between_samples_never_inside_one(data: Path, tmp_path: Path, operation: str) -> None:
    # SQLite checkpoints its WAL in the commit that takes the log past 1,000 pages; a timed write must not hold
    # it (docs/studies/cache.md §4). Exact: the -wal file's header counts the log's restarts (bytes 12-16).
    s = suite(data=str(data), codecs=("json",), compressors=("none",), settings={"matrix.stores": "sqlite",
                                                                                 "matrix.operations": operation})
    [cell] = s.cells()
    workdir = tmp_path / "cell"
    workdir.mkdir()
    op = s.prepare(cell, workdir)
    try:
        [wal] = workdir.glob("**/*-wal")

        def restarts() -> int:
            return int.from_bytes(wal.read_bytes()[12:16], "big")

        upkeep = op.before_sample
        assert upkeep is not None

        def write() -> None:
            if op.before_each is not None:
                op.before_each()
            op.call()

        upkeep()
        write()  # the first write after a checkpoint starts the log again, and counts it in the header
        before = restarts()
        for _ in range(1200):  # a page or more a write: past 1,000 pages of log
            write()
        assert wal.stat().st_size > 1000 * 4096 and restarts() == before  # no write checkpointed
        upkeep()
        write()
        assert restarts() == before + 1  # the upkeep did
    finally:
        if op.close is not None:
            op.close()


def test_a_sqlite_read_keeps_the_stores_own_checkpoints(data: Path, tmp_path: Path) -> None:
    s = suite(data=str(data), codecs=("json",), compressors=("none",), settings={"matrix.stores": "sqlite",
                                                                                 "matrix.operations": "get_one"})
    [cell] = s.cells()
    op = s.prepare(cell, tmp_path)
    try:
        assert op.before_sample is None
    finally:
        if op.close is not None:
            op.close()
