"""The CLI in-process: commands, output streams, and one-line errors with exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stratabench.cli.main import main
from stratabench.report.formats import REPORTERS
from stratabench.results.format import load
from tests.golden_files import GOLDEN

RESULTS = GOLDEN / "results" / "v1.jsonl"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_availability(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "--json")
    listing = json.loads(out)
    assert code == 0
    assert {"suites", "codecs", "compressors", "stores", "mappers"} <= set(listing)
    assert any(p["name"] == "timeit" and p["available"] for p in listing["suites"])


#: What each report format's output shows of the golden results; every registered format needs one.
FORMAT_MARKERS = {"terminal": "json/typed", "markdown": "| json/typed |", "csv": "table,name", "json": '"rows"',
                  "html": "json/typed"}  # fmt: skip


@pytest.mark.parametrize("fmt", REPORTERS.names)
def test_report_renders_each_format(capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    code, out, _ = run(capsys, "report", str(RESULTS), "--format", fmt)
    assert code == 0 and FORMAT_MARKERS[fmt] in out, fmt


def test_report_to_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    code, out, _ = run(capsys, "report", str(RESULTS), "--format", "markdown", "-o", str(target))
    assert code == 0 and out == "" and "| json/typed |" in target.read_text()


@pytest.mark.parametrize(("samples", "level"), [("3", "75%"), ("5", "93.75%"), ("6", "96.87%"), ("20", "95.86%")])
def test_timeit_prints_the_level_its_interval_reaches(capsys: pytest.CaptureFixture[str], samples: str,
                                                     level: str) -> None:
    code, out, _ = run(capsys, "timeit", "--in-process", "--samples", samples, "--min-time", "0.001", "x = [1] * 10")
    assert code == 0 and out.startswith("x = [1] * 10: ") and f"per loop ({level} CI" in out
    assert f"{samples} rounds of" in out
    # The best of the rounds, beside the median: python -m timeit prints its best, so a user compares like with like.
    assert f"; best of {samples} " in out and ", worst " in out


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["run", "no-such-suite"], 2, "error: unknown suite 'no-such-suite'; known: "),
        (["report", "/nonexistent.jsonl"], 65, "error: /nonexistent.jsonl: no such file; give a results file"),
        (["report", str(RESULTS), "--format", "pdf"], 2, "error: unknown report format 'pdf'; known: csv, html, json, markdown, terminal"),
        (["run", "timeit", "--set", "nodot"], 2, "error: --set 'nodot': expected PLUGIN.SETTING=VALUE"),
        (["run", "--data", "/nonexistent.jsonl"], 2, "error: --data /nonexistent.jsonl: no such file"),
        (["run", "cache,treestore", "--full"], 2, "error: --full: cache has no reference grid; only bulkload, treestore"),
        (["run", "--full"], 2, "error: --full: name the study to run at full size (bulkload, treestore)"),
        (["timeit", "--in-process", "--min-time", "0.001", "--samples", "1", "1 +"], 1, "error: statement '1 +' is not valid Python"),
    ],
)
def test_errors_are_one_line_with_exit_codes(capsys: pytest.CaptureFixture[str], argv: list[str], code: int, message: str) -> None:
    got, out, err = run(capsys, *argv)
    assert got == code
    assert err.startswith(message), err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_bad_size_is_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run", "--size", "0")
    assert code == 2
    assert err == ("error: stratabench run: argument --size: '0' is out of range: use a whole number from 1 to "
                   "1,000,000,000,000; see 'stratabench run --help'\n")


def test_a_size_that_cannot_fit_is_refused_with_the_estimate(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run", "bulkload", "--size", "999999999999")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error: --size 999,999,999,999: the records would need about ")
    assert "2,000 bytes a record of bulkload" in err and "use --size" in err


def test_corrupt_results_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(RESULTS.read_text()[:200])
    code, _, err = run(capsys, "report", str(bad))
    assert code == 65 and err.startswith(f"error: {bad}, line 1: not JSON")


def test_unwritable_output(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _, err = run(capsys, "run", "timeit", "--in-process", "--samples", "1", "--min-time", "0.001",
                       "-o", str(blocker / "results.jsonl"))
    assert code == 74 and err.startswith("error: cannot write results to")


def test_existing_output_is_not_clobbered(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "results.jsonl"
    target.write_text("keep me\n")
    code, _, err = run(capsys, "run", "timeit", "--in-process", "--samples", "1", "--min-time", "0.001", "-o", str(target))
    assert code == 73 and "pass --overwrite" in err and target.read_text() == "keep me\n"


def test_run_writes_results_and_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "results.jsonl"
    code, out, err = run(capsys, "run", "timeit", "--samples", "2", "--min-time", "0.001", "-o", str(target),
                         "--set", "timeit.stmt=sum(range(10))")
    assert code == 0, err
    assert "sum(range(10))" in out and f"results: {target}" in err
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[0]["environment"]["python"]["version"]
    cell, = (line for line in lines if line["type"] == "cell")
    assert cell["cell"] == "sum(range(10))" and cell["status"] == "ok"
    assert len(cell["metrics"]["wall_ns"]["samples"]) == 2 and cell["metrics"]["wall_ns"]["rounds"] == [0, 1]
    rounds = [line for line in lines if line["type"] == "round"]
    assert [r["number"] for r in rounds] == [0, 1] and rounds[0]["order"] == ["timeit/sum(range(10))"]
    assert rounds[0]["reference_ns"] > 0 and rounds[0]["seed"] == rounds[1]["seed"]


def test_console_script_runs_as_a_subprocess() -> None:
    exe = Path(sys.executable).with_name("stratabench")
    done = subprocess.run([str(exe), "run", "nope"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stderr.startswith("error: unknown suite 'nope'")
    done = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and "run" in done.stdout


def test_data_alone_runs_the_matrix_suite(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    records = tmp_path / "mine.jsonl"
    records.write_text('{"id": 1, "name": "a"}\n{"id": 2, "name": "b"}\n')
    target = tmp_path / "results.jsonl"
    code, out, err = run(capsys, "run", "--data", str(records), "--codec", "json", "--compressor", "none", "--in-process",
                         "--samples", "1", "--min-time", "0.001", "-o", str(target))
    assert code == 0, err
    written = [json.loads(line) for line in target.read_text().splitlines()]
    suites = {record["suite"] for record in written if record["type"] == "cell"}
    assert written[-1]["type"] == "trailer"  # a finished run ends with its trailer
    assert suites == {"matrix"} and "matrix: 2 records from mine.jsonl" in out


def test_a_misspelt_setting_is_refused_before_running(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "results.jsonl"
    code, out, err = run(capsys, "run", "--set", "go.benchtim=1s", "-o", str(target))
    assert code == 2 and out == "" and not target.exists()
    known = "go.benchtime, go.count, go.processes, go.formats, go.variants"
    assert err == f"error: --set go.benchtim: unknown setting; known for go: {known}\n"


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("nosuch.thing=1", "error: --set nosuch.thing: unknown setting namespace 'nosuch'; known: bulkload, cache, "),
        ("go.count=abc", "error: setting go.count='abc' is not a whole number from 1 to 1,000\n"),
        ("sqlite.journal_mode=fast", "error: setting sqlite.journal_mode='fast' is not valid; use one of delete, "),
    ],
)
def test_unknown_namespaces_and_bad_setting_values(capsys: pytest.CaptureFixture[str], pair: str, message: str) -> None:
    code, _, err = run(capsys, "run", "timeit", "--set", pair)
    assert code == 2 and err.startswith(message) and err.count("\n") == 1, err


def test_list_settings(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "list", "settings")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("settings (--set NAME=VALUE")
    bulkload = lines.index("  bulkload suite")
    benchtime = next(i for i, line in enumerate(lines) if line.split()[0] == "go.benchtime")
    assert benchtime > bulkload and lines[benchtime].split()[1] == "-"
    assert any(line.split()[:2] == ["sqlite.journal_mode", "wal"] for line in lines)
    code, out, _ = run(capsys, "list", "settings", "--json")
    settings = {s["name"]: s for s in json.loads(out)["settings"]}
    assert code == 0 and settings["zlib.level"]["default"] == "6" and settings["zlib.level"]["type"] == "whole"
    assert settings["go.benchtime"]["plugin"] == "bulkload" and settings["go.benchtime"]["plugin_kind"] == "suite"


def test_a_command_whose_module_is_missing_is_an_error_not_a_silence(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # None in sys.modules makes the import fail as a missing module does.
    monkeypatch.setitem(sys.modules, "stratabench.cli.timeit", None)
    code, out, err = run(capsys, "list")
    assert code == 1 and out == ""
    assert err.startswith("error: the timeit command cannot be loaded: importing stratabench.cli.timeit failed with "
                          "ModuleNotFoundError: ")
    assert err.count("\n") == 1 and "reinstall stratabench" in err


def test_a_command_whose_dependency_fails_to_import_is_an_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "stratabench.cli.run", raising=False)  # imported afresh
    monkeypatch.setitem(sys.modules, "stratabench.cli.arguments", None)
    code, _, err = run(capsys, "--help")
    assert code == 1
    assert err.startswith("error: the run command cannot be loaded: importing stratabench.cli.run failed with ")
    assert "stratabench.cli.arguments" in err


def test_bare_command_welcomes_and_measures_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys)
    assert code == 0 and not err
    quick = [line.split("#")[0].strip() for line in out.splitlines() if line.startswith("  stratabench ")]
    assert len(quick) == 3 and len(out.splitlines()) <= 12
    from stratabench.cli.main import build_parser

    for line in quick:
        build_parser().parse_args(line.split()[1:])  # each quick command is a real one
    assert not (tmp_path / "results").exists(), "a bare stratabench must not start a run"


def test_version_and_python_dash_m() -> None:
    from stratabench import __version__

    done = subprocess.run([sys.executable, "-m", "stratabench", "--version"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.strip() == f"stratabench {__version__}"


def test_run_prints_its_plan_and_takes_comma_lists(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "results.jsonl"
    code, out, err = run(capsys, "run", "matrix", "--set", "matrix.dataset=comments", "--size", "5",
                         "--codec", "json,pickle", "--compressor", "none", "--set", "matrix.stores=memory",
                         "--set", "matrix.operations=get_many", "--in-process", "--samples", "1",
                         "--min-time", "0.001", "-o", str(target))
    assert code == 0, err
    assert err.startswith("plan: 2 cells in 1 suite (matrix 2); about ")
    codecs = {cell.params["codec"] for cell in load(target).cells}  # the reader skips the run's trailer
    assert codecs == {"json", "pickle"}
    assert out.index("where and when this was measured") < out.index("matrix: the answer") < out.index(
        "matrix: 5 records")


def test_full_plans_the_treestore_reference_grid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "treestore", "--full", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "treestore/json-file" not in out  # cell names are backend/N/test
    for n in ("1000", "10000", "100000"):
        assert f"  json-file/{n}/17-create-an-item-cached" in out and f"  sqlite@disk/{n}/01-get-tree" in out


def test_quick_is_a_small_dataset_sampled_as_fast(capsys: pytest.CaptureFixture[str]) -> None:
    from stratabench.cli.main import build_parser
    from stratabench.cli.run import QUICK_SIZE, _quick

    args = build_parser().parse_args(["run", "bulkload", "--quick"])
    _quick(args)
    assert (args.size, args.preset) == (QUICK_SIZE, "fast")
    chosen = build_parser().parse_args(["run", "bulkload", "--quick", "--samples", "4", "--size", "300"])
    _quick(chosen)
    assert (chosen.size, chosen.preset, chosen.samples) == (300, None, 4)  # what the user chose stays
    assert main(["run", "bulkload", "--quick", "--dry-run"]) == 0
    assert " cells in 1 suites (dry run: nothing measured)" in capsys.readouterr().out.splitlines()[0]


def test_timeit_takes_each_sample_in_a_fresh_worker_process(capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    # One process's memory layout moves a small loop by up to 15%, the same in all its samples; pyperf spreads its
    # values over processes for that reason, and so do timeit's rounds.
    pids = tmp_path / "pids"
    setup = f"import os\nwith open({str(pids)!r}, 'a') as f: f.write(f'{{os.getpid()}}\\n')"
    code, out, _ = run(capsys, "timeit", "--samples", "3", "--min-time", "0.001", "-s", setup, "x = 1")
    assert code == 0 and "3 rounds of" in out
    assert len(set(pids.read_text().split())) == 3
