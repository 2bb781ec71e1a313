"""The worker's request (store URLs with their passwords) goes through a pipe, never a file."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from stratabench.cli.main import main

PASSWORD = "pipe-only-s3cret"


def test_no_file_holds_the_password_while_a_spawned_worker_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    real_run = subprocess.run
    seen: list[dict[str, Any]] = []

    def watching_run(args: Any, **kwargs: Any) -> Any:
        if "stratabench.engine.worker" in args:
            files = [p for p in Path(tempfile.gettempdir()).rglob("*") if p.is_file()]
            seen.append({
                "files": [str(p) for p in files],
                "with_password": [str(p) for p in files if PASSWORD.encode() in p.read_bytes()],
                "piped": PASSWORD in (kwargs.get("input") or ""),
            })
        return real_run(args, **kwargs)

    monkeypatch.setattr(subprocess, "run", watching_run)
    output = tmp_path / "results.jsonl"
    code = main(["run", "timeit", "--samples", "1", "--min-time", "0.001", "-q", "--spawn",
                 "--store", f"redis://:{PASSWORD}@127.0.0.1:1/0", "-o", str(output)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert seen, "no worker was started"
    assert all(call["piped"] and call["with_password"] == [] for call in seen), seen
    assert PASSWORD not in out + err + output.read_text()


def test_no_file_holds_the_password_while_a_forked_worker_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from stratabench.engine.zygote import Zygote

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    real_run = Zygote.run
    seen: list[dict[str, Any]] = []

    def watching_run(self: Zygote, request: Any, result: Path, log: Path, timeout_s: float) -> Any:
        files = [p for p in Path(tempfile.gettempdir()).rglob("*") if p.is_file()]
        seen.append({
            "with_password": [str(p) for p in files if PASSWORD.encode() in p.read_bytes()],
            "piped": PASSWORD in json.dumps(request),
        })
        return real_run(self, request, result, log, timeout_s)

    monkeypatch.setattr(Zygote, "run", watching_run)
    output = tmp_path / "results.jsonl"
    code = main(["run", "timeit", "--samples", "1", "--min-time", "0.001", "-q",
                 "--store", f"redis://:{PASSWORD}@127.0.0.1:1/0", "-o", str(output)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert seen, "no worker was forked"
    assert all(call["piped"] and call["with_password"] == [] for call in seen), seen
    assert PASSWORD not in out + err + output.read_text()
