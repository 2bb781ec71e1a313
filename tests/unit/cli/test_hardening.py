"""Issue 14: every bad input is refused before anything starts, in one line, with a documented exit status."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from stratabench.cli.main import main
from stratabench.errors import StratabenchError, error_tree, exit_statuses
from stratabench.results.format import FORMAT_VERSION, cell_to_json, header_record
from stratabench.results.records import CellResult, MetricResult

FAST = ["--in-process", "--samples", "1", "--min-time", "0.001"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err


@pytest.mark.parametrize(("argv", "message"), [
    (["run", "--min-time", "nan"], "argument --min-time: 'nan' is not a number of seconds (a finite number)"),
    (["run", "--min-time", "inf"], "argument --min-time: 'inf' is not a number of seconds"),
    (["run", "--min-time", "1e300"], "argument --min-time: '1e300' is out of range: use a number of seconds from 0 to 60"),
    (["run", "--cell-timeout", "0"], "argument --cell-timeout: '0' is out of range: use a number of seconds above 0"),
    (["run", "--cell-timeout=-inf"], "argument --cell-timeout: '-inf' is not a number of seconds"),
    (["run", "--samples", "99999999999999999999"], "argument --samples: '99999999999999999999' is out of range"),
    (["run", "--warmups", "-1"], "argument --warmups: '-1' is out of range: use a whole number from 0 to 10,000"),
    (["run", "--size", "99999999999999999999"], "argument --size: '99999999999999999999' is out of range"),
    (["compare", "a", "b", "--min-effect", "2000%"], "argument --min-effect: '2000%' is out of range"),
])
def test_numbers_out_of_range(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in one_error(err)


def test_unknown_mapper_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run", "entities", "--mapper", "nosuch")
    assert code == 2 and one_error(err) == "error: unknown mapper 'nosuch'; known: datastore, lazy, ndb, protobuf\n"


def test_a_mapper_keeps_only_its_entities_cells() -> None:
    import stratabench.plugins  # noqa: F401 -- registers the suites
    from stratabench.options import RunOptions
    from stratabench.suites import SUITES
    from stratabench.suites.entities.suite import path_mapper

    every = SUITES.get("entities")(RunOptions()).cells()
    lazy = SUITES.get("entities")(RunOptions(mappers=("lazy",))).cells()
    assert 0 < len(lazy) < len(every)
    assert {path_mapper(cell.params["path"]) for cell in lazy} == {"lazy"}
    assert path_mapper("ndb.decode") == "ndb" and path_mapper("message") == "protobuf" and path_mapper("bytes") is None


def test_store_urls_are_checked_before_anything_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "run", "timeit", "--store", "redis://127.0.0.1/abc")
    assert code == 2 and "database 'abc' is not a number" in one_error(err)
    missing = tmp_path / "nonexistent" / "dir"
    code, _, err = run(capsys, "run", "timeit", "--store", f"sqlite://{missing}/x.db")
    assert code == 2 and f"directory {missing} does not exist" in one_error(err)
    assert not missing.parent.exists()


def test_data_that_is_not_a_file_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, kind in ((tmp_path, "a directory"), (Path("/dev/null"), "a character device"),
                       (fifo, "a FIFO (named pipe)"), (tmp_path / "none.jsonl", None)):
        code, _, err = run(capsys, "run", "--data", str(path))
        assert code == 2
        assert (f"is {kind};" if kind else "no such file") in one_error(err)


def test_user_data_nesting_and_line_length_are_bounded(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from stratabench.datasets import userfile

    for depth in (40, 5000):
        deep = tmp_path / f"deep{depth}.jsonl"
        deep.write_text('{"a": ' + "[" * depth + "]" * depth + "}\n")
        code, _, err = run(capsys, "run", "--data", str(deep), *FAST)
        assert code == 65 and "line 1: nested deeper than 32 levels" in one_error(err)
    long = tmp_path / "long.jsonl"
    long.write_text('{"a": "' + "x" * (userfile.MAX_LINE_BYTES + 1) + '"}\n')
    code, _, err = run(capsys, "run", "--data", str(long), *FAST)
    assert code == 65 and "line 1: 16,777,2" in one_error(err)


def test_results_path_under_a_file_and_into_a_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _, err = run(capsys, "run", "timeit", *FAST, "-o", str(blocker / "sub" / "r.jsonl"))
    assert code == 74 and f"{blocker} is a file, not a directory" in one_error(err)
    folder = tmp_path / "out"
    code, _, err = run(capsys, "run", "timeit", *FAST, "-o", f"{folder}/")
    written = list(folder.glob("*.jsonl"))
    assert code == 0 and len(written) == 1 and f"results: {written[0]}" in err
    folder_again = tmp_path / "existing"
    folder_again.mkdir()
    code, _, err = run(capsys, "run", "timeit", *FAST, "-o", str(folder_again))
    assert code == 74 and "it is a directory; end --output with /" in one_error(err)


def _results(path: Path, *cells: dict[str, object], version: object = 1) -> Path:
    header = header_record("r", "2026-11-22T00:00:00+00:00", {}, {})
    header["format_version"] = version
    path.write_text("".join(json.dumps(line) + "\n" for line in (header, *cells)))
    return path


def _cell() -> dict[str, object]:
    return cell_to_json(CellResult("timeit", "x", {"stmt": "pass"}, "python", "ok", loops=1,
                                   metrics={"wall_ns": MetricResult.of([1.0, 2.0])}))


def test_report_of_a_header_only_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "report", str(_results(tmp_path / "empty.jsonl")))
    assert code == 65 and out == "" and "no cells" in one_error(err)


def _with(**changes: object) -> dict[str, object]:
    cell = _cell()
    cell.update(changes)
    return cell


@pytest.mark.parametrize(("cell", "message"), [
    (_with(metrics=[1, 2]), "'metrics' must be an object"),
    (_with(params=[1, 2]), "'params' must be an object of plain values"),
    (_with(params={"a": {"b": 1}}), "'params' must be an object of plain values"),
    (_with(metrics={"wall_ns": {"samples": [1], "summary": {**_cell()["metrics"]["wall_ns"]["summary"],  # type: ignore[index]
                                                             "median": "fast"}}}), "metric 'wall_ns': summary 'median' must be a number"),
    (_with(metrics={"wall_ns": {"samples": ["a"], "summary": {}}}), "metric 'wall_ns': 'samples' must be a non-empty list of numbers"),
    (_with(status="great"), "status 'great' is not one of"),
    (_with(suite=None), "'suite' must be a string"),
])
def test_records_of_the_wrong_shape_name_their_line(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                   cell: dict[str, object], message: str) -> None:
    path = _results(tmp_path / "bad.jsonl", _cell(), cell)
    code, _, err = run(capsys, "report", str(path))
    assert code == 65 and f"{path}, line 3: malformed cell record: {message}" in one_error(err)


def test_a_deeply_nested_line_is_not_a_crash(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _results(tmp_path / "deep.jsonl", _cell())
    with path.open("a") as file:
        file.write("[" * 100_000 + "]" * 100_000 + "\n")
    code, _, err = run(capsys, "report", str(path))
    assert code == 0 and err.startswith(f"warning: {path}, line 3: not JSON (nested too deeply to read)")


def test_a_truncated_file_is_read_to_its_last_whole_record(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _results(tmp_path / "cut.jsonl", _cell(), _cell())
    text = path.read_text()
    path.write_text(text[:text.rindex('"flags"') + 3])  # cut inside a key of the last record
    code, out, err = run(capsys, "report", str(path))
    assert code == 0 and "x" in out
    # The decoder's reason depends on where the cut falls in the record, which changes with the format.
    assert err.startswith(f"warning: {path}, line 3: not JSON (") and err.count("\n") == 1
    assert err.endswith("); the file is corrupt or truncated there, so only the 1 cells before it are read\n")


@pytest.mark.parametrize(("version", "message"), [
    (0, f"format version 0 is not one this stratabench reads (1 to {FORMAT_VERSION}); it has no upgrade path"),
    ("1", "format version '1' is not one this stratabench reads"),
    (FORMAT_VERSION + 1, f"format version {FORMAT_VERSION + 1} is newer than this stratabench reads "
                         f"(1 to {FORMAT_VERSION}); upgrade stratabench"),
])
def test_format_versions_are_upgraded_or_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                 version: object, message: str) -> None:
    code, _, err = run(capsys, "report", str(_results(tmp_path / "old.jsonl", _cell(), version=version)))
    assert code == 65 and message in one_error(err)


@pytest.mark.parametrize(("stmt", "message"), [
    ("1/0", "error: statement line 1 '1/0' raised ZeroDivisionError: division by zero\n"),
    ("import os; os._exit(5)", "error: the statement called os._exit(5), which ends the process at once; "
                               "time something that returns\n"),
    ("import sys; sys.exit(3)", "error: the statement raised SystemExit(3) (sys.exit or exit)"),
])
@pytest.mark.parametrize("isolation", [["--in-process"], []])
def test_a_failing_statement_is_the_users_error(capsys: pytest.CaptureFixture[str], stmt: str, message: str,
                                                isolation: list[str]) -> None:
    code, _, err = run(capsys, "timeit", *isolation, "--samples", "1", "--min-time", "0.001", stmt)
    assert code == 1 and one_error(err).startswith(message)


def test_every_exit_status_is_documented_once(capsys: pytest.CaptureFixture[str]) -> None:
    import importlib
    import pkgutil

    import stratabench

    for module in pkgutil.walk_packages(stratabench.__path__, "stratabench."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)  # every error class, wherever it is defined
    tree = {name: code for name, code, _ in error_tree()}
    classes: list[type[StratabenchError]] = [StratabenchError]
    for cls in classes:
        classes += cls.__subclasses__()
    assert {cls.__name__: cls.exit_code for cls in classes} == tree
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for code, meaning in exit_statuses().items():
        assert f"  {code:<4} {meaning}" in out


def test_dry_run_prints_the_plan_and_measures_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "results.jsonl"
    code, out, _ = run(capsys, "run", "timeit", "--dry-run", "-o", str(target), "--set", "timeit.stmt=x = 1")
    assert code == 0 and out.splitlines() == ["1 cells in 1 suites (dry run: nothing measured)", "timeit: 1 cells",
                                              "  x = 1"]
    assert not target.exists()


@pytest.mark.parametrize(("argv", "message"), [
    # Issue 27, item 8: messages that named the wrong thing, or not what to fix.
    (["load", "--store", "redis://127.0.0.1:1/0?bogus=1"],
     "error: store URL 'redis://127.0.0.1:1/0?bogus=1' is not one redis can use: "),
    (["compare", "a", "b", "--fail-above", "-1e308"], "argument --fail-above: '-1e308' is out of range"),
    (["compare", "a", "b", "--fail-above", "-inf"], "argument --fail-above: '-inf' is not a number"),
    (["run", "--data", ""], "error: --data is empty; give the name of a JSON Lines or CSV file of records"),
    (["report", ""], "error: a results file name is empty; give the path of a results file"),
    (["load", "--store", "memory://", "--client-lang", ""], "error: --client-lang '' names no language"),
])
def test_messages_name_what_to_fix(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, _, err = run(capsys, *argv)
    assert code in (2, 65) and message in one_error(err)


@pytest.mark.parametrize(("argv", "code", "said", "unsaid"), [
    # Issue 27, item 8, every example of "messages that do not name what to fix", through the command line.
    (["load", "--store", "redis://127.0.0.1:1/0?bogus=1"], 2,
     "is not one redis can use: ", "services up"),  # malformed, not "unreachable"
    (["load", "--store", "redis://nosuch.invalid/0"], 69,
     "cannot connect to redis at nosuch.invalid:6379: ", "redis at nosuch.invalid: "),  # the port tried is named
    (["compare", "a.jsonl", "b.jsonl", "--fail-above", "-1e308"], 2,
     "argument --fail-above: '-1e308' is out of range: use a number from 1 to 1000", "expected one argument"),
    (["run", "timeit", "-o", ""], 2, "argument -o/--output: '' is empty; give the name of a file", "results to ."),
    (["report", "", "-o", "r.txt"], 65, "a results file name is empty; give the path of a results file", "'.'"),
    (["run", "--data", ""], 2, "--data is empty; give the name of a JSON Lines or CSV file", "'.'"),
    (["run", "matrix", "--dry-run", "--data", "{big}"], 65,
     "an integer of more than 4,300 digits; write it as a string", "set_int_max_str_digits"),
    (["load", "--store", "memory://", "--client-lang", ""], 2,
     "--client-lang '' names no language; choose python or go", "--workload"),
    (["timeit", "import time; time.sleep(30)", "--cell-timeout", "0.3", "--samples", "1", "--warmups", "0"], 1,
     "timed out after 0.3 s; raise --cell-timeout", "after 0 s"),
])
def test_every_message_of_item_8_names_what_to_fix(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch, argv: list[str], code: int,
                                                   said: str, unsaid: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "big.jsonl").write_text(f'{{"a": {"1" * 5000}}}\n')
    argv = [arg.replace("{big}", str(tmp_path / "big.jsonl")) for arg in argv]
    got, _, err = run(capsys, *argv)
    assert got == code, err
    assert said in err and unsaid not in err, err
    assert [line for line in err.splitlines() if line.startswith("error: ")] == [err.splitlines()[-1]], err


def test_target_is_read_as_its_metavar_percent_says(capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 27, item 8: `--target 5%` was refused though the metavar is PERCENT.
    for target in ("5%", "5", "0.05"):
        code, out, err = run(capsys, "run", "timeit", "--dry-run", "--target", target)
        assert code == 0 and "timeit: 1 cells" in out, err


@pytest.mark.parametrize(("command", "percent"), [("timeit", "95%"), ("compare", "1 - 5% / cells")])
def test_help_says_95_percent_once(capsys: pytest.CaptureFixture[str], command: str, percent: str) -> None:
    # Issue 27, item 8: the help printed "95%%".
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert percent in out and "%%" not in out


def test_a_huge_integer_in_data_is_named_without_an_interpreter_hint(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path) -> None:
    digits = "1" * 5000
    (tmp_path / "big.jsonl").write_text(f'{{"a": {digits}}}\n')
    (tmp_path / "big.csv").write_text(f"a,b\n{digits},x\n")
    code, _, err = run(capsys, "run", "matrix", "--dry-run", "--data", str(tmp_path / "big.jsonl"))
    assert code == 65 and "an integer of more than 4,300 digits; write it as a string" in one_error(err)
    assert "set_int_max_str_digits" not in err
    code, _, err = run(capsys, "run", "matrix", "--dry-run", "--data", str(tmp_path / "big.csv"))
    assert code == 0 and "Traceback" not in err  # a CSV column of such numbers is text


@pytest.mark.parametrize("target", ["5%", "5", " 5 % "])
def test_target_takes_a_percentage(target: str) -> None:
    from stratabench.cli.arguments import engine_options
    from stratabench.cli.main import build_parser

    args = build_parser().parse_args(["run", "--target", target])
    assert engine_options(args).target == pytest.approx(0.05)


def test_allowance_rounds_reach_the_engine_and_a_bad_count_is_named() -> None:
    from stratabench.cli.arguments import engine_options
    from stratabench.cli.main import build_parser
    from stratabench.errors import UsageError

    assert engine_options(build_parser().parse_args(["run"])).allowance_rounds == 12
    assert engine_options(build_parser().parse_args(["run", "--allowance-rounds", "9"])).allowance_rounds == 9
    with pytest.raises(UsageError, match="argument --allowance-rounds: '0' is out of range"):
        build_parser().parse_args(["run", "--allowance-rounds", "0"])


def test_no_retake_reaches_the_engine_and_retaking_is_the_default() -> None:
    from stratabench.cli.arguments import engine_options
    from stratabench.cli.main import build_parser

    assert engine_options(build_parser().parse_args(["run"])).retake
    assert not engine_options(build_parser().parse_args(["run", "--no-retake"])).retake


@pytest.mark.parametrize("command", ["compare", "timeit", "run", "load", "report"])
def test_help_prints_no_doubled_percent(capsys: pytest.CaptureFixture[str], command: str) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "%%" not in capsys.readouterr().out


def test_a_sub_second_cell_timeout_is_said_as_given() -> None:
    from stratabench.engine.cell import _timed_out
    from stratabench.engine.operation import CellSpec
    from stratabench.options import RunOptions

    options = RunOptions().with_engine(cell_timeout_s=0.25)
    spec = CellSpec("timeit", "x", {}, "python")  # type: ignore[call-arg]
    assert "timed out after 0.25 s" in str(_timed_out(spec, options, 0.0).error)


@pytest.mark.parametrize(("argv", "message"), [
    # Issue 27, item 9: accepted silently before.
    (["load", "--store", "memory://", "--codec", "GARBAGE"], "error: --codec 'GARBAGE' encodes --data records;"),
    (["load", "--store", "memory://", "--codec", ""], "error: --codec '' encodes --data records;"),
    (["load", "--store", "memory://", "--server", "python-orm"], "error: --server is for `stratabench load parking`"),
    (["load", "--store", "memory://", "--db", "postgresql"], "error: --db is for `stratabench load parking`"),
    (["load", "--store", "memory://", "--cluster", ""], "error: --cluster '' is not a cluster"),
    (["run", "--dry-run", "--codec", ""], "error: --codec is empty; name at least one"),
    (["run", "--dry-run", "--compressor", ","], "error: --compressor is empty; name at least one"),
])
def test_options_that_would_be_ignored_are_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                   argv: list[str], message: str) -> None:
    code, _, err = run(capsys, *argv, *(["-o", str(tmp_path / "r.jsonl")] if argv[0] == "load" else []))
    assert code == 2 and one_error(err).startswith(message)
    assert not (tmp_path / "r.jsonl").exists()


def test_clean_refuses_a_bad_store_before_cleaning_a_good_one(capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    good = tmp_path / "good.db"
    good.write_bytes(b"")
    import sqlite3

    sqlite3.connect(good).close()
    code, out, err = run(capsys, "clean", "--store", f"sqlite://{good}", "--store", "redis://:x@[::1")
    assert code == 2 and out == "" and one_error(err).startswith("error: malformed store URL")


def _named(tmp_path: Path, name: str, param: str) -> Path:
    cell = CellResult("timeit", name, {"stmt": param}, "python", "ok", loops=1,
                      metrics={"wall_ns": MetricResult.of([1.0, 2.0, 3.0])})
    path = tmp_path / "named.jsonl"
    path.write_text(json.dumps(header_record("r", "2026-11-22T00:00:00+00:00", {}, {})) + "\n"
                    + json.dumps(cell_to_json(cell)) + "\n")
    return path


def test_csv_cells_that_start_a_formula_are_quoted(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import csv
    import io

    path = _named(tmp_path, "=HYPERLINK(\"http://x\")", "@SUM(A1)")
    code, out, _ = run(capsys, "report", str(path), "--format", "csv", "--detail", "full")
    cells = [cell for row in csv.reader(io.StringIO(out)) for cell in row]
    assert code == 0 and "'=HYPERLINK(\"http://x\")" in cells
    assert not [cell for cell in cells if cell[:1] in ("=", "+", "@")]
    assert not [cell for cell in cells if cell.startswith("-") and not cell.lstrip("-").replace(".", "").replace("e", "").isdigit()]


def test_terminal_output_shows_escape_sequences_instead_of_sending_them(capsys: pytest.CaptureFixture[str],
                                                                        tmp_path: Path) -> None:
    path = _named(tmp_path, "x\x1b]0;owned\x07\x1b[2J", "pass\x9b")
    code, out, _ = run(capsys, "report", str(path), "--detail", "full")
    assert code == 0 and "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "\\x1b]0;owned" in out
    code, _, err = run(capsys, "run", "--dry-run", "--codec", "x\x1b[2J")
    assert "\x1b" not in err and "\\x1b[2J" in err
