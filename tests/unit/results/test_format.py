"""The results format: golden files of every version load; bad files give one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stratabench.datasets.verify import Integrity
from stratabench.errors import OutputExistsError, ResultsFormatError
from stratabench.results.format import FORMAT_VERSION, cell_to_json, header_record, load
from stratabench.results.records import CellResult, MetricResult, Retake
from stratabench.results.writer import ResultsWriter

GOLDEN = Path(__file__).parents[2] / "golden" / "results"


def example_cell() -> CellResult:
    return CellResult(
        suite="bulkload", cell="json/typed", params={"codec": "json", "mode": "typed", "size": 10},
        language="python", status="ok", loops=1000,
        metrics={"wall_ns": MetricResult.of([100.0, 110.0, 105.0]), "size_bytes": MetricResult.of([1776.0])},
        integrity=Integrity("69e2a61caa30fcff9ea19db1b95611ab9f84fd2a", "69e2a61caa30fcff9ea19db1b95611ab9f84fd2a"),
        notes={"library": "json"}, duration_s=1.5,
    )


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("v*.jsonl")), ids=lambda p: p.name)
def test_every_golden_version_still_loads(path: Path) -> None:
    results = load(path)
    assert results.header["run_id"] == "golden"
    assert [c.cell for c in results.cells] == ["json/typed", "orjson/raw"]
    ok, failed = results.cells
    assert ok.ok and ok.median("wall_ns") == 105.0 and ok.integrity is not None and ok.integrity.ok
    assert failed.status == "failed" and failed.error == "integrity: record 0 field 'time': expected 1, got 2"


def test_current_version_has_a_golden_file() -> None:
    assert (GOLDEN / f"v{FORMAT_VERSION}.jsonl").exists(), "add a golden file for the new format version"


def test_round_trip_through_writer_and_loader(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with ResultsWriter(path, header_record("rid", "2026-01-01T00:00:00+00:00", {}, {})) as writer:
        writer.write(example_cell())
    loaded = load(path)
    assert loaded.cells == [example_cell()]
    assert loaded.header["format_version"] == FORMAT_VERSION


def test_writer_refuses_to_clobber(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("precious\n")
    with pytest.raises(OutputExistsError, match="exists; choose another --output or pass --overwrite"):
        ResultsWriter(path, header_record("rid", "t", {}, {}))
    assert path.read_text() == "precious\n"
    ResultsWriter(path, header_record("rid", "t", {}, {}), overwrite=True).close()
    assert load(path).cells == []


def test_records_are_flushed_as_written(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    writer = ResultsWriter(path, header_record("rid", "t", {}, {}))
    writer.write(example_cell())
    assert len(load(path).cells) == 1  # readable before close: a crash keeps it
    writer.close()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty file, no header record"),
        ("{not json\n", "line 1: not JSON"),
        ('{"type": "cell"}\n', "line 1: the first record must be the header"),
        ('{"type": "header", "format_version": 99, "run_id": "x"}\n', "format version 99 is newer than this stratabench reads"),
        ('[1, 2]\n', "line 1: expected a JSON object"),
    ],
)
def test_bad_files_give_one_line_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(ResultsFormatError, match=message) as raised:
        load(path)
    assert "\n" not in str(raised.value)


def test_truncated_last_line_is_a_warning_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    good = (GOLDEN / f"v{FORMAT_VERSION}.jsonl").read_text().splitlines()
    path.write_text("\n".join(good[:2]) + "\n" + good[2][:40])
    loaded = load(path)
    assert len(loaded.cells) == 1
    assert len(loaded.warnings) == 1 and "line 3: not JSON" in loaded.warnings[0]


def test_malformed_cell_record(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    header = json.dumps(header_record("x", "t", {}, {}))
    cell = cell_to_json(example_cell())
    cell["metrics"] = {"not_a_metric": cell["metrics"]["wall_ns"]}
    path.write_text(header + "\n" + json.dumps(cell) + "\n")
    with pytest.raises(ResultsFormatError, match="line 2: malformed cell record"):
        load(path)


def test_missing_file() -> None:
    with pytest.raises(ResultsFormatError, match="results.jsonl: no such file; give a results file"):
        load("/nonexistent/results.jsonl")


def test_version_1_cells_upgrade_with_no_flags_and_version_2_keeps_them() -> None:
    old, new = load(GOLDEN / "v1.jsonl"), load(GOLDEN / "v2.jsonl")
    assert [cell.flags for cell in old.cells] == [(), ()]
    assert [cell.flags for cell in new.cells] == [("stdev 14.2% of the mean (> 10.0%)",), ()]
    assert new.cells[0].unstable and not new.cells[1].unstable


def test_the_trailer_adds_the_load_at_the_end_to_the_header_environment(tmp_path: Path) -> None:
    loaded = load(GOLDEN / "v2.jsonl")
    environment = loaded.header["environment"]
    assert environment["load_average_start"] == [0.52, 0.4, 0.31]
    assert environment["load_average_end"] == [0.61, 0.45, 0.33]
    assert loaded.header["finished"] == "2026-11-21T06:03:00+00:00"
    path = tmp_path / "r.jsonl"
    with ResultsWriter(path, header_record("rid", "t", {"load_average_start": [1.0, 1.0, 1.0]}, {})) as writer:
        writer.write(example_cell())
        writer.finish("t2", {"load_average_end": [2.0, 1.5, 1.0]})
    assert load(path).header["environment"] == {"load_average_start": [1.0, 1.0, 1.0], "load_average_end": [2.0, 1.5, 1.0]}


def test_a_file_from_before_rounds_loads_with_a_note_that_its_intervals_leave_out_the_drift() -> None:
    old, new = load(GOLDEN / "v2.jsonl"), load(GOLDEN / "v3.jsonl")
    assert old.format_version == 2 and old.drift_note is not None and "do not include the run's drift" in old.drift_note
    assert all(m.rounds is None for c in old.cells for m in c.metrics.values()) and old.cells[0].group is None
    assert new.drift_note is None and new.cells[0].group == "bulkload/10"
    assert new.cells[0].metrics["wall_ns"].rounds == (0, 1, 2)
    assert [r["number"] for r in new.rounds] == [0, 1, 2] and new.rounds[1]["order"] == ["orjson/raw", "json/typed"]


def test_rounds_round_trip_and_a_bad_rounds_list_is_named(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    cell = CellResult(suite="s", cell="c", params={}, language="python", status="ok", group="s/g",
                      metrics={"wall_ns": MetricResult.of([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1])})
    with ResultsWriter(path, header_record("rid", "t", {}, {})) as writer:
        writer.write(cell)
    assert load(path).cells == [cell]
    record = cell_to_json(cell)
    record["metrics"]["wall_ns"]["rounds"] = [0]
    path.write_text(json.dumps(header_record("rid", "t", {}, {})) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(ResultsFormatError, match="'rounds' must be null or a list of integers, one per sample"):
        load(path)


def test_probe_figures_and_retaken_samples_round_trip_and_a_bad_retake_is_named(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    retake = Retake(1, 360_000.0, 250_000.0, {"wall_ns": 2.0, "thread_cpu_ns": 1.9})
    cell = CellResult(suite="s", cell="c", params={}, language="python", status="ok",
                      metrics={"wall_ns": MetricResult.of([1.0, 1.1], [0, 1])}, probe_ns=(251_000.0, 240_000.0),
                      retaken=(retake,))
    with ResultsWriter(path, header_record("rid", "t", {}, {})) as writer:
        writer.write(cell)
        writer.write(example_cell())
    probed, unprobed = load(path).cells
    assert probed == cell and probed.retaken[0].probe_ratio == 1.44
    assert "probe_ns" not in cell_to_json(unprobed) and unprobed.retaken == ()  # a run without the probe reads as before
    record = cell_to_json(cell)
    record["retaken"][0]["values"] = {"wal_ns": 2.0}
    path.write_text(json.dumps(header_record("rid", "t", {}, {})) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(ResultsFormatError, match="'retaken' must be a list of objects"):
        load(path)
