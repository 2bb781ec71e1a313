"""The run's time estimate from earlier results files: never a crash, never a hang (issue 27, item 4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from stratabench.results.format import cell_to_json, header_record
from stratabench.results.records import CellResult, MetricResult
from stratabench.suites.kit.plan import cell_key, previous_durations


def _write(path: Path, header: dict[str, object], seconds: float) -> None:
    cell = CellResult("timeit", "x", {"stmt": "pass"}, "python", "ok", loops=1, duration_s=seconds,
                      metrics={"wall_ns": MetricResult.of([1.0, 2.0, 3.0])})
    path.write_text(json.dumps(header) + "\n" + json.dumps(cell_to_json(cell)) + "\n")


def test_bad_and_special_files_are_skipped(tmp_path: Path) -> None:
    _write(tmp_path / "good.jsonl", header_record("r", "2026-11-22T00:00:00+00:00", {}, {}), 2.5)
    for name, value in (("environment", []), ("options", "x"), ("run_id", 3)):
        header = header_record("r", "2026-11-22T00:00:00+00:00", {}, {})
        header[name] = value
        _write(tmp_path / f"bad-{name}.jsonl", header, 9.0)
    os.mkfifo(tmp_path / "fifo.jsonl")
    (tmp_path / "dir.jsonl").mkdir()
    (tmp_path / "broken.jsonl").symlink_to(tmp_path / "nowhere")
    (tmp_path / "device.jsonl").symlink_to("/dev/zero")
    assert previous_durations(tmp_path, newest=50) == {cell_key("timeit", "x", {"stmt": "pass"}): 2.5}


def test_a_run_beside_a_fifo_and_a_malformed_file_starts(tmp_path: Path) -> None:
    # Before: a FIFO named *.jsonl in the output directory hung every run; a malformed header was a traceback.
    header = header_record("r", "2026-11-22T00:00:00+00:00", {}, {})
    header["environment"] = []
    _write(tmp_path / "old.jsonl", header, 1.0)
    os.mkfifo(tmp_path / "pipe.jsonl")
    done = subprocess.run([sys.executable, "-m", "stratabench.cli.main", "run", "timeit", "--in-process", "--samples",
                           "1", "--min-time", "0.001", "--warmups", "0", "--memory-samples", "0", "-q",
                           "-o", f"{tmp_path}/"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
