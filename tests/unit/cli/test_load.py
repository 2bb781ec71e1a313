"""``stratabench load``'s bad input: one line each, before anything starts (no server needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratabench.cli.main import main
from stratabench.services.ports import free_port


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--clients=-2"], "error: --clients must be at least 1, not -2"),
        (["--clients", "0"], "error: --clients must be at least 1, not 0"),
        (["--rate", "0"], "error: --rate must be a positive number, not 0; give requests per second"),
        (["--rate=-50"], "error: --rate must be a positive number, not -50;"),
        (["--rate", "100,0", "--sweep"], "error: --rate must be a positive number, not 0;"),
        (["--rate", "fast"], "error: --rate 'fast': expected a number or comma-separated numbers"),
        (["--duration", "0"], "error: stratabench load: argument --duration: '0' is out of range: use a number of "
                              "seconds above 0"),
        (["--workload", "z"], "error: unknown workload 'z'; known: get, put, a, b, c"),
        (["--cluster", "somewhere"], "error: --cluster 'somewhere' is not a cluster; use local, local:N or"),
        (["--records", "2", "--clients", "3"], "error: 3 clients need at least 3 records, one key each, and there are 2"),
        (["--set", "redis.nonsense=1"], "error: "),
        (["--data", "/no/such/file.jsonl"], "error: /no/such/file.jsonl: no such file"),
        (["--client-lang", "rust"], "error: --client-lang 'rust': choose python or go"),
        (["--client-lang", "go", "--cluster", "local"], "error: --cluster runs Python clients only;"),
    ],
)
def test_bad_input_is_one_line_and_nothing_is_written(
    arguments: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "results.jsonl"
    code = main(["load", "--store", "redis://127.0.0.1:6379/0", "-o", str(output), *arguments])
    err = capsys.readouterr().err
    assert code == (65 if "no such file" in message else 2)  # a missing data file is a DataError
    assert err.startswith(message) and err.count("\n") == 1, err
    assert not output.exists()


def test_an_unreachable_store_is_one_line_before_any_client_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "results.jsonl"
    code = main(["load", "--store", f"redis://127.0.0.1:{free_port()}/0", "-o", str(output)])
    err = capsys.readouterr().err
    assert code == 69
    assert err.startswith("error: cannot connect to redis at 127.0.0.1:") and err.count("\n") == 1, err
    assert not output.exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["parking", "--server", "python-rust"], "error: --server 'python-rust': choose among python-orm, python-core,"),
        (["parking", "--clients", "0"], "error: --clients must be at least 1, not 0"),
        (["parking", "--rate", "0"], "error: --rate must be a positive number, not 0;"),
        (["parking", "--db", "oracle://somewhere/db"], "error: parking database URL 'oracle': use sqlite:///PATH,"),
        (["parking", "--sweep"], "error: --sweep loads stores only;"),
        (["parking", "--store", "redis://127.0.0.1:6379/0"], "error: give --store URL to load a store, or"),
        ([], "error: give --store URL to load a store, or `stratabench load parking`"),
    ],
)
def test_bad_parking_load_input_is_one_line_and_nothing_is_written(
    arguments: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "results.jsonl"
    code = main(["load", "-o", str(output), *arguments])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(message) and err.count("\n") == 1, err
    assert not output.exists()


@pytest.mark.parametrize(("path", "said"), [("/dev/urandom", "is a character device"), ("FIFO", "is a FIFO (named pipe)"),
                                            ("DIR", "is a directory")])
def test_data_that_is_not_a_regular_file_is_refused_at_once(
    path: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 27, item 5: /dev/urandom was read until MemoryError, a FIFO blocked for ever.
    import os

    if path == "FIFO":
        path = str(tmp_path / "pipe.jsonl")
        os.mkfifo(path)
    elif path == "DIR":
        path = str(tmp_path)
    output = tmp_path / "results.jsonl"
    assert main(["load", "--store", "memory://", "--data", path, "-o", str(output)]) == 65
    err = capsys.readouterr().err
    assert err == f"error: {path}: {said}; give --data a JSON Lines or CSV file\n"
    assert not output.exists()


@pytest.mark.parametrize(("arguments", "message"), [
    (["--records", "99999999999999999999"], "argument --records: '99999999999999999999' is out of range: use a whole "
                                            "number from 1 to 10,000,000"),
    (["--records", "10000000", "--value-size", "1000"], "error: --records 10,000,000 of --value-size 1,000 bytes make "
                                                        "10.00 GB, over the 2.00 GB"),
    (["--value-size", "1e11"], "argument --value-size: '1e11' is not a whole number"),
    (["--warmup", "inf"], "argument --warmup: 'inf' is not a number of seconds (a finite number)"),
    (["--duration", "1e308"], "argument --duration: '1e308' is out of range: use a number of seconds above 0, up to "
                              "86400"),
    (["--p99-limit", "inf"], "argument --p99-limit: 'inf' is not a number of milliseconds (a finite number)"),
    (["--error-limit", "5"], "argument --error-limit: '5' is out of range: use a fraction from 0 to 1"),
    (["--rate", "1e308"], "error: --rate 1e+308 is out of range: use finite numbers up to 10,000,000"),
    (["--seed", "1e400"], "argument --seed: '1e400' is not a whole number"),
])
def test_load_numbers_have_checked_ranges(arguments: list[str], message: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    # Issue 27, item 5: these were plain numbers: memory eaten until killed, or a traceback.
    output = tmp_path / "results.jsonl"
    assert main(["load", "--store", "memory://", "-o", str(output), *arguments]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and err.startswith("error: "), err
    assert not output.exists()
