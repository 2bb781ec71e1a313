"""``stratabench compare``: pairing, verdicts, the regression gate and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stratabench.cli.main import main
from stratabench.results.format import cell_to_json, header_record
from stratabench.results.records import CellResult, MetricResult


def write(path: Path, cells: dict[str, list[float]], failed: tuple[str, ...] = ()) -> Path:
    lines = [header_record(path.stem, "2026-11-21T00:00:00+00:00", {"cpu": "test"}, {})]
    for name, samples in cells.items():
        status = "failed" if name in failed else "ok"
        result = CellResult("bulkload", name, {"codec": name}, "python", status,  # type: ignore[arg-type]
                            error="boom" if status == "failed" else None, loops=1,
                            metrics={"wall_ns": MetricResult.of(samples)})
        lines.append(cell_to_json(result))
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    before = write(tmp_path / "before.jsonl", {"a": [100, 101, 102], "b": [100, 101, 102], "c": [10, 11, 12],
                                               "gone": [1, 1, 1], "broken": [1, 1, 1]})
    after = write(tmp_path / "after.jsonl", {"a": [200, 201, 202], "b": [100, 102, 104], "c": [5, 5, 5],
                                             "new": [1, 1, 1], "broken": [1, 1, 1]}, failed=("broken",))
    return before, after


def test_verdicts_and_unpaired_cells(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(runs[0]), str(runs[1])]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[1]: line for line in out.splitlines() if line.startswith("bulkload")}
    assert "1.99×" in rows["a"] and rows["a"].endswith("slower")
    assert rows["b"].endswith("within noise")
    assert rows["c"].endswith("faster")
    assert "not compared: bulkload new: only in the second file" in out
    assert "not compared: bulkload gone: only in the first file" in out
    assert "not compared: bulkload broken: failed in the second file" in out


def test_regression_gate(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(runs[0]), str(runs[1]), "--fail-above", "1.5"]) == 1
    assert "regression: bulkload a: 1.99× (limit 1.5×)" in capsys.readouterr().err
    assert main(["compare", str(runs[0]), str(runs[1]), "--fail-above", "2.5"]) == 0


def test_unknown_metric_is_a_usage_error(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(runs[0]), str(runs[1]), "--metric", "speed"]) == 2
    assert capsys.readouterr().err.startswith("error: --metric 'speed' is not a metric; known: wall_ns, cpu_ns")
