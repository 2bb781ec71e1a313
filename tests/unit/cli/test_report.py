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


def _header_with(**changes: object) -> dict[str, object]:
    header = header_record("r", "2026-11-22T00:00:00+00:00", {"cpu": "c"}, {})
    for key, value in changes.items():
        where, _, name = key.partition("__")
        if name:
            header[where][name] = value  # type: ignore[index]
        else:
            header[where] = value
    return header


WRONG = [None, True, 1, 1.5, "x", [], [1], {}, {"a": 1}]


@pytest.mark.parametrize("field", ["environment", "options", "services", "run_id", "started", "options__engine",
                                   "options__size", "options__stores", "options__settings", "environment__python",
                                   "environment__packages", "environment__memory_bytes", "environment__cpu_governor",
                                   "environment__load_average_start", "trailer__environment", "trailer__finished"])
def test_a_malformed_header_or_trailer_is_one_line_in_report_and_compare(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str) -> None:
    # Issue 27, item 4: a header of the wrong type ("environment": []) was a traceback in report and compare.
    good = results(tmp_path / "good.jsonl")
    cell = json.loads(good.read_text().splitlines()[1])
    for value in WRONG:
        if field.startswith("trailer__"):
            header = _header_with()
            trailer = {"type": "trailer", "finished": "2026-11-22T00:01:00+00:00", "environment": {}}
            trailer[field.partition("__")[2]] = value
            lines = [header, cell, trailer]
        else:
            lines = [_header_with(**{field: value}), cell]
        bad = tmp_path / "bad.jsonl"
        bad.write_text("".join(json.dumps(line) + "\n" for line in lines))
        for argv in (["report", str(bad)], ["report", str(bad), "--format", "html"], ["compare", str(good), str(bad)],
                     ["compare", str(bad), str(good), "--fail-above", "1.1"]):
            code = main(argv)
            out, err = capsys.readouterr()
            assert "Traceback" not in err and code in (0, 1, 65), (argv, value, err)
            if code == 65:
                assert one_error(err) and "bad.jsonl, line " in err, (field, value, err)


@pytest.mark.parametrize("command", ["report", "compare"])
def test_special_and_huge_files_are_refused_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    command: str) -> None:
    # Issue 27, item 5: /dev/zero was read until MemoryError, a FIFO blocked for ever.
    import os

    good = results(tmp_path / "good.jsonl")
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as file:
        file.truncate(10**12)
    for path, said in (("/dev/zero", "is a character device"), (str(fifo), "is a FIFO (named pipe)"),
                       (str(tmp_path), "is a directory"), (str(huge), "1000.00 GB is over the 256.0 MB this reads")):
        argv = ["report", path] if command == "report" else ["compare", str(good), path]
        assert main(argv) == 65
        assert f"{path}: {said}; give a results file" in one_error(capsys.readouterr().err)
