"""``stratabench serve parking``: the process contract, and one-line errors for a bad database."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stratabench.cli.main import main
from stratabench.systems.parking.schema import create_parking_engine, recreate


def test_an_unreachable_database_is_one_line_with_the_password_masked(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["serve", "parking", "--impl", "python-core", "--db", "mysql://u:secret@127.0.0.1:1/x"])
    err = capsys.readouterr().err
    assert code == 69
    assert err.startswith("error: parking database mysql://u:***@127.0.0.1:1/x: ") and err.count("\n") == 1
    assert "secret" not in err


def test_it_listens_answers_statements_and_stops_when_stdin_closes(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'p.db'}"
    engine = create_parking_engine(url)
    recreate(engine)
    engine.dispose()
    done = subprocess.run([sys.executable, "-m", "stratabench.cli.main", "serve", "parking", "--impl", "python-orm",
                           "--db", url], input="statements\n", capture_output=True, text=True, timeout=120)  # fmt: skip
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stderr
    assert lines[0].startswith("listening 127.0.0.1:")
    assert lines[1].startswith('statements {"SELECT": 0')
