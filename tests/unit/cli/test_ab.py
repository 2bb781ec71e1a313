"""``stratabench ab``: two sides in one run, its refusals, its results header and its summary."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from stratabench.adapters import golang
from stratabench.cli.ab import _common
from stratabench.cli.main import main
from stratabench.engine.operation import CellSpec
from tests.availability import unavailable


def test_a_side_that_is_no_python_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    assert main(["ab", "bulkload", "--b", str(text)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a Python interpreter or a virtual environment" in err


def test_an_interpreter_without_stratabench_is_refused_in_one_line(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    bare = tmp_path / "bin" / "python"
    bare.parent.mkdir()
    bare.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named stratabench' >&2\nexit 1\n")
    bare.chmod(0o755)
    assert main(["ab", "bulkload", "--b", str(tmp_path), "-o", str(tmp_path / "r.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a Python with stratabench importable" in err and "No module named" in err
    assert not (tmp_path / "r.jsonl").exists()


def test_cells_on_one_side_only_are_listed_not_compared() -> None:
    shared, mine, theirs = CellSpec("s", "shared"), CellSpec("s", "only-a"), CellSpec("s", "only-b")
    cells, lines = _common({"A": [(shared, None), (mine, None)], "B": [(shared, None), (theirs, None)]})
    assert [cell.spec.name for cell in cells] == ["shared"]
    assert lines == ["s only-a: only on side A", "s only-b: only on side B"]


def test_two_environments_measured_in_one_run(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    if not golang.go_available()[0]:
        unavailable(golang.go_available()[1])
    other = next(path for path in (Path(sys.executable).with_name(name) for name in ("python3", "python3.11"))
                 if path.exists() and str(path) != sys.executable)
    step = tmp_path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    output = tmp_path / "ab.jsonl"
    code = main(["ab", "bulkload", "--codec", "json", "--size", "100", "--b", str(other), "--rounds", "2",
                 "--samples", "1", "--min-time", "0", "--memory-samples", "0", "-q", "-o", str(output),
                 "--order-seed", "5"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "json/raw" in out and "B/A" in out
    assert "cells compared:" in err and "not compared: bulkload go" not in err, err
    assert "go json/warm" in out  # a Go cell on both sides: B's through B's own stratabench and Go build
    # It has no worker CPU time: judged on its wall time, and its row says so.
    assert any("go json/warm" in line and "wall_ns" in line for line in out.splitlines()), out
    records = [json.loads(line) for line in output.read_text().splitlines()]
    sides = records[0]["ab"]["sides"]
    assert sides["B"]["python"] == str(other) and sides["A"]["python"] == sys.executable
    assert "msgspec" in sides["B"]["environment"]["packages"]
    assert records[0]["ab"]["order_seed"] == 5
    measured = [record for record in records if record.get("type") == "cell"]
    assert {(record["notes"]["ab_side"], record["notes"]["ab_round"]) for record in measured} == \
        {("A", 0), ("B", 0), ("A", 1), ("B", 1)}
    go = [record for record in measured if record["cell"] == "go json/warm"]
    assert sorted(record["notes"]["ab_side"] for record in go) == ["A", "A", "B", "B"]
    assert all(record["status"] == "ok" for record in go), go
    assert step.read_text().startswith("## stratabench ab: this environment → python ")


def test_counting_without_valgrind_says_what_to_install_and_measures_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    output = tmp_path / "ab.jsonl"
    assert main(["ab", "bulkload", "--b", "sqlite.journal_mode=wal", "--count", "instructions", "-o", str(output)]) == 69
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "apt-get install -y valgrind" in err
    assert not output.exists()


def test_in_process_is_refused_for_a_side_that_is_another_environment(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = next(path for path in (Path(sys.executable).with_name(name) for name in ("python3", "python3.11"))
                 if path.exists() and str(path) != sys.executable)
    assert main(["ab", "bulkload", "--b", str(other), "--in-process", "-o", str(tmp_path / "ab.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "drop --in-process" in err


def test_a_visit_takes_two_samples_without_a_warm_up_by_default_and_the_options_change_it() -> None:
    from stratabench.cli.ab import ROUND_SAMPLES, ROUND_WARMUPS
    from stratabench.cli.arguments import engine_options
    from stratabench.cli.main import build_parser

    engine = engine_options(build_parser().parse_args(["ab", "--b", "x"]))
    assert (engine.samples, engine.warmups) == (ROUND_SAMPLES, ROUND_WARMUPS) == (2, 0)
    engine = engine_options(build_parser().parse_args(["ab", "--b", "x", "--samples", "3", "--warmups", "1"]))
    assert (engine.samples, engine.warmups) == (3, 1)
    assert engine_options(build_parser().parse_args(["run"])).warmups == 1  # run keeps its warm-up


def test_a_visit_of_treestore_or_parking_takes_as_many_tries_as_a_python_visit_takes_samples() -> None:
    # run gives them 3 (the fewest compare can judge in one visit); ab's rounds give the spread, and at 3 a visit
    # treestore and parking took 220 of 704 s of ab over the default suites.
    from stratabench.cli.ab import visit_settings

    assert visit_settings(2, {}) == {"treestore.tries": "2", "parking.runs": "2"}
    assert visit_settings(2, {"parking.runs": "5", "cache.x": "y"}) == {"treestore.tries": "2", "parking.runs": "5",
                                                                       "cache.x": "y"}
    assert visit_settings(None, {}) == {}
