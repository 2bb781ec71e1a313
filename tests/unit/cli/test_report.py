"""``stratabench report``: where the report goes, and what it refuses to write over (issue 27, item 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stratabench.cli.main import main
from stratabench.results.format import cell_to_json, header_record
from stratabench.results.records import CellResult, MetricResult


def results(path: Path) -> Path:
    cell = CellResult("timeit", "x", {"stmt": "pass"}, "python", "ok", loops=1,
                      metrics={"wall_ns": MetricResult.of([1.0, 2.0, 3.0])})
    lines = [header_record("r", "2026-11-22T00:00:00+00:00", {}, {}), cell_to_json(cell)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def one_error(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err


def test_the_results_file_read_is_never_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = results(tmp_path / "mine.jsonl")
    before = mine.read_bytes()
    for extra in ([], ["--overwrite"]):
        assert main(["report", str(mine), "-o", str(mine), *extra]) == 2
        assert "is the results file being read" in one_error(capsys.readouterr().err)
    (tmp_path / "link.jsonl").symlink_to(mine)
    assert main(["report", str(tmp_path / "link.jsonl"), "-o", str(mine), "--overwrite"]) == 2
    capsys.readouterr()
    assert mine.read_bytes() == before


def test_an_existing_file_needs_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = results(tmp_path / "run.jsonl")
    existing = tmp_path / "report.md"
    existing.write_text("keep me")
    assert main(["report", str(source), "-o", str(existing), "--format", "markdown"]) == 73
    assert "report.md exists; choose another --output or pass --overwrite" in one_error(capsys.readouterr().err)
    assert existing.read_text() == "keep me"
    assert main(["report", str(source), "-o", str(existing), "--format", "markdown", "--overwrite"]) == 0
    assert "timeit" in existing.read_text()


@pytest.mark.parametrize("name", ["newdir/", "existing"])
def test_a_directory_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    source = results(tmp_path / "run.jsonl")
    (tmp_path / "existing").mkdir()
    assert main(["report", str(source), "-o", f"{tmp_path}/{name}"]) == 2
    assert "is a directory; name the file to write in it" in one_error(capsys.readouterr().err)
    assert not (tmp_path / "newdir").exists() and list((tmp_path / "existing").iterdir()) == []


def test_a_new_file_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = results(tmp_path / "run.jsonl")
    assert main(["report", str(source), "-o", str(tmp_path / "out.txt")]) == 0
    assert "timeit" in (tmp_path / "out.txt").read_text() and capsys.readouterr().out == ""
