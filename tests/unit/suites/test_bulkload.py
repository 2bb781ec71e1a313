"""The bulkload suite in-process on a small dataset: cells, integrity, tables, verdicts."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from stratabench.engine.cell import run_cell_in_process
from stratabench.engine.operation import CellSpec
from stratabench.options import EngineOptions, RunOptions
from stratabench.results.records import CellResult, MetricResult
from stratabench.engine.slices import SlicedRun
from stratabench.suites.bulkload.go import _go_result
from stratabench.suites.bulkload.report import conclusions_table
from stratabench.suites.bulkload.suite import GO_PROCESSES, GO_SAMPLES, BulkloadSuite
from stratabench.suites.kit.reports import tables_of

FAST = EngineOptions(samples=2, warmups=0, min_sample_ns=1_000_000, memory_samples=1, isolate=False)
HASH_1000 = "f95cc302db8529e5daabc7211c27616afbe832ba"


def suite(**options: object) -> BulkloadSuite:
    return BulkloadSuite(RunOptions(suites=("bulkload",), size=1000, engine=FAST, **options))  # type: ignore[arg-type]


def test_cells_cover_every_codec_and_go_format() -> None:
    names = [cell.name for cell in suite().cells()]
    assert "json/typed" in names and "msgspec.msgpack/typed" in names and "embed/cached" in names
    go = [n for n in names if n.startswith("go ")]
    assert go[:10] == ["go embed/warm", "go embed/fresh"] + [
        f"go {f}/{v}" for f in ("gob", "json", "msgp") for v in ("warm", "fresh", "encode")
    ][:8]
    assert "go embed/encode" not in go, "embed's encode is its build"
    assert {"go cbor/warm", "go cbor/encode", "go protobuf/warm", "go xml/encode"} <= set(go)
    assert "go cbor/fresh" not in go, "the default run loads fresh only the seed's formats"
    assert not any(name.endswith("/datetime") for name in names), "inexact modes must not run by default"
    # Both directions for every timed codec; a lazy format's access and read rows beside its parse.
    assert "json/typed encode" in names and "pickle/typed encode" in names
    assert "pickle/raw" not in names, "the default run loads each codec's first mode"
    assert {"embed/compile", "embed/cached", "embed/resident"} <= set(names)
    assert not any(n.startswith("embed/") and n.endswith(" encode") for n in names)
    assert {"protobuf/typed", "protobuf/typed access", "protobuf/typed read"} <= set(names)
    assert {"arrow/table read", "parquet/table read", "simdjson/lazy read"} <= set(names)
    assert "json/typed read" not in names, "an eager format has read every field in its load"
    # Cross-language rows read the seed's Go files (every wire with --full, and in the tests).
    assert {"json/raw <- go json", "msgpack/go-msgpack <- go msgpack", "msgpack/go-msgp <- go msgp"} <= set(names)
    assert "cbor2/typed <- go cbor" not in names


def test_full_runs_every_mode_and_variant() -> None:
    names = {c.name for c in BulkloadSuite(RunOptions(suites=("bulkload",), full=True, engine=FAST)).cells()}
    assert {"pickle/raw", "pickle/raw encode", "go cbor/fresh", "ujson/raw encode"} <= names
    # Every wire both languages speak, a lazy reader held to reading every field.
    assert {"cbor2/typed <- go cbor", "protobuf/typed read <- go protobuf", "fastavro/raw <- go avro",
            "arrow/table read <- go arrow", "flatbuffers/table read <- go flatbuffers"} <= names


@pytest.mark.slow
def test_the_go_formats_are_the_go_programs(go_program: Callable[[str], Path]) -> None:
    from stratabench.adapters import golang
    from stratabench.suites.bulkload.suite import GO_FORMATS, GO_MORE_FORMATS

    go_program("stratabench-go")
    assert set(golang.info()["formats"]) == set(GO_FORMATS + GO_MORE_FORMATS)
    assert len(GO_FORMATS + GO_MORE_FORMATS) >= 15


@pytest.mark.parametrize("name", ["json/typed encode", "protobuf/typed encode", "protobuf/typed access",
                                  "protobuf/typed read"])
def test_encode_access_and_read_cells_verify(name: str) -> None:
    (cell,) = [c for c in suite().cells() if c.name == name]
    result = run_cell_in_process(cell, suite().options)
    assert result.ok, result.error
    assert result.integrity is not None and result.integrity.actual == HASH_1000
    for metric in ("size_bytes", "size_zstd_bytes", "size_lz4_bytes"):
        assert metric in result.metrics, metric
    assert result.median("size_zstd_bytes") < result.median("size_bytes")


def test_access_of_other_values_fails_the_check() -> None:
    from stratabench.datasets.bulkload import BULKLOAD_SCHEMA
    from stratabench.layers.codecs import make_format
    from stratabench.suites.bulkload.suite import _access_verifier

    check = _access_verifier(1000, 100, make_format("protobuf", BULKLOAD_SCHEMA))
    from stratabench.datasets import bulkload

    values = [row[0] for row in bulkload.cached_rows(1000, 100)]
    assert check(values).ok
    values[7] = not values[7]
    result = check(values)
    assert not result.ok and "record 7" in (result.detail or "")


@pytest.mark.parametrize(("options", "size"), [({}, 10_000), ({"full": True}, 100_000),
                                             ({"full": True, "size": 500}, 500)])
def test_the_default_run_loads_a_tenth_of_the_study_and_full_loads_all_of_it(options: dict[str, object],
                                                                               size: int) -> None:
    run = RunOptions(suites=("bulkload",), engine=FAST, **options)  # type: ignore[arg-type]
    assert {cell.params["size"] for cell in BulkloadSuite(run).cells()} == {size}


def test_inexact_modes_run_only_when_asked() -> None:
    names = [c.name for c in suite(settings={"bulkload.inexact": "yes"}, codecs=("msgspec.json",)).cells()]
    assert "msgspec.json/datetime" in names
    # Asked for without naming codecs: the default run's first modes, and every lossy one beside them.
    names = [c.name for c in suite(settings={"bulkload.inexact": "yes"}).cells()]
    assert {"msgspec.json/datetime", "msgspec.msgpack/datetime"} <= set(names) and "msgspec.json/raw" not in names


def test_unknown_codec_fails_before_measuring() -> None:
    from stratabench.errors import UnknownNameError

    with pytest.raises(UnknownNameError, match="unknown codec 'nope'"):
        suite(codecs=("nope",)).cells()


@pytest.mark.parametrize("name", ["json/typed", "msgspec.msgpack/typed", "pickle/typed"])
def test_python_cell_verifies_the_reference_hash(name: str) -> None:
    (cell,) = [c for c in suite().cells() if c.name == name]
    result = run_cell_in_process(cell, suite().options)
    assert result.ok, result.error
    assert result.integrity is not None and result.integrity.actual == HASH_1000
    for metric in ("wall_ns", "cpu_ns", "alloc_bytes", "retained_bytes", "allocs", "size_bytes"):
        assert metric in result.metrics, metric


def test_a_threaded_codecs_cells_are_judged_on_wall_time(tmp_path: Path) -> None:
    # pyarrow's Parquet reader decodes on its own thread pool, which the calling thread's CPU time leaves out.
    bulkload = suite(codecs=("json", "parquet"))
    judged = {cell.name: bulkload.prepare(cell, tmp_path).judged_metric
              for cell in bulkload.cells() if cell.language == "python"}
    assert judged and all(metric == ("wall_ns" if name.startswith("parquet/") else "thread_cpu_ns")
                          for name, metric in judged.items()), judged


def test_every_python_cell_traces_its_memory_in_a_child(tmp_path: Path) -> None:
    bulkload = suite(codecs=("json", "protobuf"))
    for cell in [c for c in bulkload.cells() if c.language == "python"]:
        assert bulkload.prepare(cell, tmp_path).memory_in_child, cell.name


def test_inexact_cell_fails_naming_record_and_field() -> None:
    options = suite(settings={"bulkload.inexact": "yes"}, codecs=("msgspec.json",)).options
    (cell,) = [c for c in BulkloadSuite(options).cells() if c.name == "msgspec.json/datetime"]
    result = run_cell_in_process(cell, options)
    assert result.status == "failed"
    assert result.error is not None and result.error.startswith("integrity: record 0") and "time" in result.error


def test_go_line_with_a_wrong_hash_fails_the_cell() -> None:
    spec = CellSpec("bulkload", "go gob/warm", {"format": "gob", "variant": "warm", "size": 1000, "seed": 100}, "go")
    line = {"format": "gob", "variant": "warm", "loops": 10, "samples": {"wall_ns": [1.0, 2.0]},
            "size_bytes": 5, "hash": "0" * 40, "extra": {}, "error": None}
    result = _go_result(spec, line, HASH_1000, {})
    assert result.status == "failed" and "integrity" in (result.error or "")
    line["hash"] = HASH_1000
    good = _go_result(spec, line, HASH_1000, {})
    assert good.ok and good.judged == good.judged_metric == "wall_ns"  # timed in the Go process, said so


class FakeGo:
    """The Go adapter of a run, faked: process ``p`` gives every sample ``speeds[p]`` ms, one sample in three of
    its first cell 2x slower (a slow window), or fails after its first cell when ``p`` is ``broken``; a cell of
    ``slow`` is 1.5x slow in the processes it names. Each cell moves ``clock`` on by 0.1 s."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, speeds: list[float],
                 broken: int | None = None, slow: Mapping[str, set[int]] | None = None,
                 clock: list[float] | None = None) -> None:
        from stratabench.adapters import golang
        from stratabench.suites.bulkload import go

        self.speeds, self.broken, self.slow, self.clock = speeds, broken, slow or {}, clock or [0.0]
        self.hash = HASH_1000  # what every cell's data hashes to, when checked
        self.asked: list[tuple[int, object, object]] = []
        #: The cells each process was told an earlier one had checked (it leaves their hash out).
        self.checked: list[list[str]] = []
        monkeypatch.setattr(golang, "go_available", lambda: (True, ""))
        monkeypatch.setattr(golang, "ensure_built", lambda *args, **kwargs: None)
        monkeypatch.setattr(golang, "info", lambda: {"go_version": "go1.99"})
        monkeypatch.setattr(golang, "embed_cache_dir", lambda size, seed: tmp_path / "embed")
        monkeypatch.setattr(golang, "run_bulkload", self.run_bulkload)
        monkeypatch.setattr(go.dataset, "cached_hash", lambda size, seed: HASH_1000)

    def run_bulkload(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        from stratabench.adapters import golang

        process = len(self.asked)
        self.asked.append((kwargs["count"], kwargs["cells"], kwargs["loops"]))
        self.checked.append(list(kwargs.get("checked") or ()))
        speed = self.speeds[process]
        for number, cell in enumerate(kwargs["cells"]):
            if process == self.broken and number == 1:
                raise golang.GoRunError("stratabench-go bulkload failed (2): killed")
            fmt, variant = cell.split("/")
            slow = [2.0 if number == 0 and k == 1 else 1.5 if process in self.slow.get(cell, ()) else 1.0
                    for k in range(kwargs["count"])]
            self.clock[0] += 0.1
            yield {"format": fmt, "variant": variant, "loops": 10 + process,
                   "samples": {"wall_ns": [speed * factor * 1e6 for factor in slow]},
                   "size_bytes": 5, "hash": None if cell in self.checked[-1] else self.hash,
                   "extra": {"records": 1000, "gomaxprocs": 1}, "error": None}


def go_cell(name: str) -> CellSpec:
    fmt, variant = name.split("/")
    return CellSpec("bulkload", f"go {name}", {"format": fmt, "variant": variant, "size": 1000, "seed": 100}, "go")


def suite_with(**settings: str) -> BulkloadSuite:
    return suite(settings={"go.count": "3", "go.processes": "6", **settings})


def test_a_runs_go_cells_take_one_process_a_slice_between_the_rounds(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    # Each process of the (fake) Go program runs at its own speed: a cell's values carry the round its process
    # followed, and its interval spans the processes' speeds; a slow sample in a process is outvoted there.
    fake = FakeGo(monkeypatch, tmp_path, [1.0, 1.3, 0.9, 1.1, 1.2, 1.0])
    written: list[CellResult] = []
    run = SlicedRun(6, written.append)
    run.open(suite_with(), [go_cell("gob/warm"), go_cell("json/encode")], tmp_path)
    for number in range(6):
        run.after_round(number)
        assert len(fake.asked) == number + 1  # one process after each round
    gob, json_encode = written
    wall = gob.metrics["wall_ns"]
    assert gob.ok and wall.rounds == (0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5)
    assert list(wall.per_round.values()) == [1e6, 1.3e6, 0.9e6, 1.1e6, 1.2e6, 1e6]  # each its process's median
    assert gob.flags and "from 6 rounds" in gob.flags[0]
    # Only the cells asked for, three samples each a process; the first process ramps up to the benchtime, the
    # later ones take its loop counts.
    assert fake.asked == [(3, ["gob/warm", "json/encode"], {})] + \
        [(3, ["gob/warm", "json/encode"], {"gob/warm": 10, "json/encode": 10})] * 5
    assert gob.notes["go_version"] == "go1.99" and gob.notes["records"] == 1000 and gob.notes["gomaxprocs"] == 1
    assert len(gob.notes["process_s"]) == 6 and gob.notes["samples_per_process"] == 3
    assert json_encode.metrics["wall_ns"].summary.n == 6 and gob.integrity is not None and gob.integrity.ok


def test_a_default_run_takes_nine_go_processes_of_every_cell_each_its_own_value(monkeypatch: pytest.MonkeyPatch,
                                                                               tmp_path: Path) -> None:
    # The default plan: nine processes of one 20 ms sample of every cell (six rounds' 30 ms samples shared among
    # them), the first six after the floor's rounds, the rest after later rounds or after the rounds: nine values a
    # cell, whose interval leaves out the slowest process's (1.3) and the fastest's (0.85).
    speeds = [1.0, 1.3, 0.9, 1.1, 1.05, 1.0, 0.85, 0.95, 1.02]
    fake = FakeGo(monkeypatch, tmp_path, speeds)
    written: list[CellResult] = []
    run = SlicedRun(6, written.append)
    bulkload = BulkloadSuite(RunOptions(suites=("bulkload",), size=1000))  # the default engine: no --samples
    run.open(bulkload, [go_cell("gob/warm"), go_cell("json/encode")], tmp_path)
    for number in range(7):
        run.after_round(number)
    assert len(fake.asked) == 7  # one process after each round, the six of the floor and a seventh
    run.finish(7)
    assert [cells for _, cells, _ in fake.asked] == [["gob/warm", "json/encode"]] * 9
    # The first process checks every cell's data; the later ones skip it, and the cell keeps the first's integrity.
    assert fake.checked == [[]] + [["gob/warm", "json/encode"]] * 8
    assert all(cell.integrity is not None and cell.integrity.ok for cell in written)
    assert bulkload._go_samples() == (1, 9) and bulkload._default_benchtime(GO_SAMPLES * GO_PROCESSES) == "20ms"
    for cell in written:
        wall = cell.metrics["wall_ns"]
        assert wall.rounds == tuple(range(9)) and wall.summary.n == 9
        assert (wall.summary.ci_low, wall.summary.ci_high) == (0.9e6, 1.1e6)


def test_a_go_cell_whose_data_hashed_wrong_is_checked_again_and_stays_failed(monkeypatch: pytest.MonkeyPatch,
                                                                             tmp_path: Path) -> None:
    fake = FakeGo(monkeypatch, tmp_path, [1.0] * 3)
    fake.hash = "0" * 40
    [gob] = suite_with(**{"go.processes": "3"}).run_external([go_cell("gob/warm")], tmp_path)
    assert fake.checked == [[], [], []]  # never skipped: no process found it right
    assert gob.status == "failed" and gob.error is not None and "integrity" in gob.error


def test_a_go_cell_that_misses_the_target_takes_processes_past_the_floor_of_it_alone(monkeypatch: pytest.MonkeyPatch,
                                                                                       tmp_path: Path) -> None:
    # One slow sample among six flags a cell (its interval is their whole range); nine processes leave it out.
    clock = [0.0]
    fake = FakeGo(monkeypatch, tmp_path, [1.0] * 9, slow={"json/encode": {2}}, clock=clock)
    written: list[CellResult] = []
    run = SlicedRun(6, written.append, options=EngineOptions(), now=lambda: clock[0])
    steady = [go_cell(name) for name in ("json/warm", "cbor/warm", "xml/warm", "avro/warm")]
    # Each cell takes 0.1 s of a process: a tenth of the floor's 3.6 s pays for three processes of one cell.
    run.open(suite_with(**{"go.count": "1"}), [go_cell("gob/warm"), go_cell("json/encode"), *steady], tmp_path)
    for number in range(10):
        run.after_round(number)
    # After the floor's six, a process of the slow cell alone after each later round, at the first one's loops.
    assert fake.asked[6:] == [(1, ["json/encode"], {"json/encode": 10})] * 3
    gob, json_encode = written[:2]
    assert gob.metrics["wall_ns"].rounds == (0, 1, 2, 3, 4, 5) and gob.flags == ()
    assert json_encode.metrics["wall_ns"].rounds == tuple(range(9)) and json_encode.flags == ()
    assert json_encode.metrics["wall_ns"].summary.max == 1.5e6  # kept, outside the interval of nine
    assert len(json_encode.notes["process_s"]) == 9


def test_a_failed_go_process_keeps_the_other_processes_values(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = FakeGo(monkeypatch, tmp_path, [1.0, 1.3, 0.9, 1.1, 1.2, 1.0], broken=2)
    first, second = suite_with().run_external([go_cell("gob/warm"), go_cell("json/encode")], tmp_path)
    assert len(fake.asked) == 6  # the processes after the failed one still run
    # The cell the process had measured keeps its six values; the other is failed, naming the process, with five.
    assert first.ok and first.metrics["wall_ns"].summary.n == 6
    assert second.status == "failed" and second.error is not None
    assert second.error.startswith("slice 3 of 6 (after round 2) failed: Go adapter: stratabench-go bulkload failed")
    assert second.metrics["wall_ns"].rounds == (0, 0, 0, 1, 1, 1, 3, 3, 3, 4, 4, 4, 5, 5, 5)


def test_go_processes_and_samples_follow_the_settings() -> None:
    def samples(engine: EngineOptions, **settings: str) -> tuple[int, int]:
        return BulkloadSuite(RunOptions(suites=("bulkload",), engine=engine, settings=settings))._go_samples()

    # A run's default: GO_SAMPLES samples in each of GO_PROCESSES processes; --samples N: N processes of one.
    assert samples(EngineOptions()) == (GO_SAMPLES, GO_PROCESSES)
    assert samples(EngineOptions(), **{"go.processes": "9"}) == (GO_SAMPLES, 9)
    assert samples(EngineOptions(samples=3)) == (1, 3)
    assert samples(EngineOptions(), **{"go.count": "4"}) == (4, GO_PROCESSES)
    assert samples(EngineOptions(samples=3), **{"go.count": "4", "go.processes": "1"}) == (4, 1)


def _go(fmt: str, wall: list[float], total: list[float]) -> CellResult:
    return CellResult("bulkload", f"go {fmt}/warm", {"format": fmt, "variant": "warm", "size": 1000}, "go", "ok",
                      loops=1, metrics={"wall_ns": MetricResult.of(wall), "alloc_total_bytes": MetricResult.of(total)})


def test_conclusions_follow_the_numbers() -> None:
    results = [_go("embed", [1, 1, 1], [0, 0, 0]), _go("gob", [100, 101, 102], [50, 50, 50]),
               _go("json", [900, 910, 920], [300, 300, 300]), _go("msgp", [50, 51, 52], [20, 20, 20])]
    verdicts = {row["n"]: row["verdict"] for row in conclusions_table(results).rows}
    assert verdicts == {1: "reproduced", 2: "reproduced", 3: "refuted", 4: "true by design"}
    results[3] = _go("msgp", [200, 201, 202], [90, 90, 90])
    assert conclusions_table(results).rows[2]["verdict"] == "reproduced"
    results[3] = _go("msgp", [99, 101, 103], [90, 90, 90])
    assert conclusions_table(results).rows[2]["verdict"] == "too close to call"
    results[3] = _go("msgp", [99, 101, 103], [10, 10, 10])  # a tie on time, a clear loss on bytes
    assert conclusions_table(results).rows[2]["verdict"] == "refuted"


def test_tables_render(tmp_path: Path) -> None:
    from stratabench.report.formats import REPORTERS

    results = [_go("gob", [100, 101, 102], [50, 50, 50])]
    text = REPORTERS.get("terminal")().render(tables_of("bulkload", results, suite().options))
    assert "go gob/warm" in text and "59.7 ms" in text  # ours beside the published dev_appserver figure


def test_without_go_the_go_rows_say_so_and_the_rest_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from stratabench.adapters import golang
    from stratabench.cli.progress import QuietProgress
    from stratabench.engine.runner import Plan, execute

    monkeypatch.setenv("PATH", str(tmp_path))  # no go here
    monkeypatch.setenv(golang.BIN_DIR_ENV, str(tmp_path))  # and no built binary
    bulk = suite(codecs=("pickle",), settings={"go.formats": "gob"})
    results: list[CellResult] = []

    class Sink:
        def write(self, result: CellResult) -> None:
            results.append(result)

        def write_round(self, record: dict[str, object]) -> None:
            pass

    execute(Plan([(bulk, bulk.cells())]), bulk.options, Sink(), QuietProgress())
    by_name = {r.cell: r for r in results}
    assert by_name["pickle/typed"].ok
    # In a run the Go cells are slices of the run; without one (stratabench ab) the suite runs them whole.
    whole = list(bulk.run_external([cell for cell in bulk.cells() if cell.language == "go"], tmp_path))
    for variant in ("warm", "fresh"):
        for go in (by_name[f"go gob/{variant}"], next(r for r in whole if r.cell == f"go gob/{variant}")):
            assert go.status == "unavailable"
            assert go.error is not None and go.error.startswith("Go rows need Go:") and "\n" not in go.error


@pytest.mark.parametrize(("options", "benchtime"), [
    ({}, "30ms"),  # the default run: the Python cells' 30 ms samples
    ({"full": True}, "250ms"),  # the study's size: 1.5 s a cell
    ({"engine": EngineOptions(min_sample_ns=20_000_000)}, "20ms"),  # --min-time is the sample, when shorter
])
def test_go_samples_share_the_cell_budget(options: dict[str, object], benchtime: str) -> None:
    run = RunOptions(suites=("bulkload",), **options)  # type: ignore[arg-type]
    assert BulkloadSuite(run)._default_benchtime(6) == benchtime


def _py(cell: str, wall: float, size: float = 1000.0, **params: object) -> CellResult:
    codec, _, rest = cell.partition("/")
    mode = rest.split(" ")[0]
    return CellResult("bulkload", cell, {"codec": codec, "mode": mode, "size": 1000, "direction": "load", **params},
                      "python", "ok", loops=1, metrics={"wall_ns": MetricResult.of([wall, wall * 1.01, wall * 0.99]),
                                                        "size_bytes": MetricResult.of([size])})


def test_a_lazy_format_is_answered_and_charted_on_reading_every_field() -> None:
    """Its parse alone (fastest of all) neither wins the answer nor joins the trade-off; its read row does,
    under the format's name; parse and access rows carry no ratio against json."""
    from stratabench.suites.bulkload.report import bulkload_answer, fair

    results = [_py("json/typed", 100.0), _py("protobuf/typed", 1.0), _py("protobuf/typed access", 5.0, step="access"),
               _py("protobuf/typed read", 50.0, step="read"),
               _py("json/typed encode", 80.0, step="encode", direction="encode"),
               _py("embed/resident", 0.5)]
    assert {r.cell for r in fair(results)} == {"json/typed", "protobuf/typed read", "json/typed encode"}
    answer = bulkload_answer(results, suite().options)
    assert answer is not None
    bests = {best.label: [c.name for c in best.winners] for best in answer.bests}
    assert bests["fastest load, Python"] == ["protobuf/typed"]
    assert answer.bests[0].winners[0].cell is results[3]
    assert bests["fastest encode, Python"] == ["json/typed encode"]
    assert [c.name for c in answer.frontier] == ["protobuf/typed"]
    table = tables_of("bulkload", results, suite().options)[0]
    ratios = {row["name"]: row["vs_json"] for row in table.rows}
    assert ratios["protobuf/typed"] is None and ratios["protobuf/typed access"] is None
    assert ratios["protobuf/typed read"] is not None and ratios["embed/resident"] is None


def test_the_zygote_s_warm_up_leaves_the_default_records_in_the_process(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path) -> None:
    # Read once in the zygote (BulkloadSuite.warm), then every forked visit starts with them: the same list,
    # not another read of the pickle.
    from stratabench.datasets import bulkload as dataset
    from stratabench.suites.bulkload.suite import DEFAULT_SIZE

    monkeypatch.setenv("STRATABENCH_CACHE_DIR", str(tmp_path))
    dataset.cached_rows.cache_clear()
    dataset.cached_hash.cache_clear()
    BulkloadSuite.warm()
    rows = dataset.cached_rows(DEFAULT_SIZE, dataset.DEFAULT_SEED)
    assert len(rows) == DEFAULT_SIZE
    assert dataset.cached_rows(DEFAULT_SIZE, dataset.DEFAULT_SEED) is rows
    assert dataset.cached_hash.cache_info().currsize == 1
    dataset.cached_rows.cache_clear()
    dataset.cached_hash.cache_clear()


def test_a_run_encodes_each_format_s_asset_once_for_all_its_cells_and_rounds_but_embed_s_every_visit(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Every visit of a format's cells used to encode the asset again (1.2 s of each round of the default run);
    # the run's first visit now makes it for the rest (stratabench.run_shared). Embed's decode needs its own
    # encode's files and module, so embed still encodes in each visit.
    from stratabench import run_shared
    from stratabench.layers import codecs
    from stratabench.run_shared import SHARED_DIR_ENV

    encodes: dict[str, int] = {}
    make_format = codecs.make_format

    def counted(*args: object, **kwargs: object) -> object:
        fmt = make_format(*args, **kwargs)  # type: ignore[arg-type]
        encode = fmt.encode

        def counting(rows: object) -> bytes:
            encodes[fmt.label] = encodes.get(fmt.label, 0) + 1
            return encode(rows)  # type: ignore[arg-type]

        fmt.encode = counting  # type: ignore[method-assign]
        return fmt

    monkeypatch.setattr(codecs, "make_format", counted)
    monkeypatch.setenv(SHARED_DIR_ENV, str(tmp_path / "shared"))
    monkeypatch.setattr(run_shared, "single_threaded", lambda: False)  # made here, where the encodes are counted
    (tmp_path / "shared").mkdir()
    suite = BulkloadSuite(RunOptions(codecs=("json", "embed"), size=200))
    cells = [cell for cell in suite.cells() if cell.language == "python" and "asset" not in cell.params]
    assert sorted(cell.name for cell in cells) == ["embed/cached", "embed/compile", "embed/resident", "json/raw",
                                                   "json/raw encode", "json/typed", "json/typed encode"]
    operations = []
    for visit in range(3):  # three rounds of every cell, each visit in a work directory of its own
        for cell in cells:
            workdir = tmp_path / f"{visit}-{cell.name.replace('/', '-')}"
            workdir.mkdir()
            operations.append(suite.prepare(cell, workdir))
    assert encodes == {"json/raw": 1, "json/typed": 1, "embed/compile": 3, "embed/cached": 3, "embed/resident": 3}
    for operation in operations:  # and every visit's load (or encode) still checks out against the dataset
        assert operation.verify is not None and operation.verify(operation.call()).ok
