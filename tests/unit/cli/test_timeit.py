"""``stratabench timeit``: multi-line setup, repeated -s, several statements, the user's errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stratabench.cli.main import main

FAST = ("--samples", "2", "--min-time", "0.001")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_multi_line_setup_runs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "timeit", "--in-process", *FAST, "--setup", "import math\nx = 2", "math.sqrt(x)")
    assert code == 0, err
    assert out.startswith("math.sqrt(x): ") and "per loop" in out


def test_repeated_setup_options_join_like_python_m_timeit(capsys: pytest.CaptureFixture[str]) -> None:
    # Before, the second -s replaced the first, and `math` was undefined.
    code, out, err = run(capsys, "timeit", "--in-process", *FAST, "-s", "import math", "-s", "x = 2", "math.sqrt(x)")
    assert code == 0, err
    assert out.startswith("math.sqrt(x): ")


def test_several_statements_are_lines_of_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "timeit", "--in-process", *FAST, "--json", "-s", "x = 4", "y = x * 2", "z = y + 1")
    record = json.loads(out)
    assert code == 0, err
    assert record["cell"] == "y = x * 2; z = y + 1"
    assert record["params"] == {"stmt": "y = x * 2\nz = y + 1", "setup": "x = 4"}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["math.sqrt(2)"], "error: statement line 1 'math.sqrt(2)' raised NameError: name 'math' is not defined\n"),
        (["-s", "a = 1", "-s", "b = 1/0", "a"], "error: setup line 2 'b = 1/0' raised ZeroDivisionError: division by zero\n"),
        (["-s", "a = (", "a"], "error: setup 'a = (' is not valid Python: '(' was never closed\n"),
    ],
)
def test_the_users_own_error_is_one_line_naming_its_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, "timeit", "--in-process", *FAST, *argv)
    assert (code, out, err) == (1, "", message)
    assert "internal error" not in err


def test_in_a_worker_process_too() -> None:
    # The default: the statement runs in a fresh worker, and its error comes back as one line.
    exe = Path(sys.executable).with_name("stratabench")
    done = subprocess.run([str(exe), "timeit", *FAST, "-s", "import math", "-s", "x = 2", "math.sqrt(x)", "1 / 0"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    assert done.stderr == "error: statement line 2 '1 / 0' raised ZeroDivisionError: division by zero\n"
    done = subprocess.run([str(exe), "timeit", *FAST, "--setup", "import math\nx = 2", "math.sqrt(x)"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("math.sqrt(x): ")


def test_a_run_takes_twenty_rounds_unless_told(capsys: pytest.CaptureFixture[str]) -> None:
    # 20, not 10: a median of 10 rounds of `pass` moved 4.1% from run to run, of 20 1.0% (cli/timeit.py says how).
    code, out, err = run(capsys, "timeit", "--in-process", "--min-time", "0.001", "pass")
    assert code == 0, err
    assert "; 20 rounds of " in out and "best of 20 " in out
