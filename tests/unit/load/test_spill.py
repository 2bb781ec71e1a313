"""Each finished second on disk as it finishes, and what the next command keeps of a killed load's.

The clients here are real processes sending sleepy requests (no server);
counts, never speeds: whatever the machine's load, the spilled seconds are
exactly the report's intervals.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from stratabench.load.client import ClientSpec
from stratabench.load.histogram import decode, encode, histogram_of
from stratabench.load.processes import LocalProcesses
from stratabench.load.recovery import SPILL_DIR, recover_killed_loads, spilling
from stratabench.load.spill import FIELDS, SecondsSpill, client_file, spilled_seconds
from stratabench.results.environment import environment
from stratabench.results.format import header_record, load
from tests.unit.load.reports import SPEC
from tests.unit.load.sleepy_requests import SleepyPlan

HEADER = header_record("load", "2026-11-26T00:00:00+00:00", environment(), {"suites": ["load"]}, {})


@pytest.mark.parametrize("rate", [None, 300.0])
def test_a_client_spills_every_interval_of_its_report_as_it_finishes(tmp_path: Path, rate: float | None) -> None:
    specs = [ClientSpec(index=i, clients=2, requests=SleepyPlan(), rate_per_s=rate, warmup_s=0.05, duration_s=0.5,
                        intervals=5, spill=str(tmp_path)) for i in range(2)]  # fmt: skip
    reports = LocalProcesses().run(specs, timeout_s=60)
    for report in reports:
        seconds = spilled_seconds(client_file(tmp_path, report.index))
        assert [s["interval"] for s in seconds] == [0, 1, 2, 3, 4]
        assert all(decode(s["histogram"]).equals(decode(h))
                   for s, h in zip(seconds, report.interval_histograms, strict=True))
        assert seconds[-1]["kinds"] == report.kinds and seconds[-1]["pid"] == report.pid
        assert sum(decode(s["histogram"]).get_total_count() for s in seconds) == report.ops > 0


def line(interval: int, latencies: list[int], index: int = 0) -> dict[str, object]:
    return {"index": index, "interval": interval, "histogram": encode(histogram_of(latencies)),
            "kinds": {"read": 3 * (interval + 1)}, "errors": 0, "first_error": None, "failed_checks": 0,
            "first_failed_check": None, "busy_cpu_s": 0.1, "wall_s": interval + 1.0, "host_busy": 0.2,
            "host": "here", "pid": 1, "host_cpus": 2}  # fmt: skip


def spill(directory: Path, index: int, *lines: dict[str, object], torn: bytes = b"") -> None:
    writer = SecondsSpill(str(directory), index)
    for each in lines:
        writer.write(each)
    writer.close()
    with client_file(directory, index).open("ab") as file:
        file.write(torn)


def test_a_torn_last_line_is_skipped_and_a_gap_ends_the_seconds(tmp_path: Path) -> None:
    assert set(line(0, [1])) == set(FIELDS)
    spill(tmp_path, 0, line(0, [1]), line(1, [2]), torn=b'{"index":0,"interval":2,"hist')
    assert [s["interval"] for s in spilled_seconds(client_file(tmp_path, 0))] == [0, 1]
    spill(tmp_path, 1, line(0, [1]), line(2, [2]), line(3, [2]))  # interval 1 lost: 2 and 3 are not read as it
    assert [s["interval"] for s in spilled_seconds(client_file(tmp_path, 1))] == [0]
    assert spilled_seconds(tmp_path / "absent.jsonl") == []


def killed_load(base: Path, pid: int, output: Path, lines: int) -> Path:
    """A root left by a killed load of SPEC (two clients): client 0 spilled ``lines`` seconds, client 1 one more."""
    root = base / f"run-{pid}"
    root.mkdir(parents=True)
    (root / ".owner").touch()
    with spilling(root, SPEC, output=output, header=HEADER, runner="local processes",
                  params={}, command="stratabench load") as directory:  # fmt: skip
        assert directory is not None
        spill(Path(directory), 0, *(line(i, [1000 + i]) for i in range(lines)))
        spill(Path(directory), 1, *(line(i, [2000 + i], index=1) for i in range(lines + 1)), torn=b'{"ind')
        shutil.copytree(directory, root / "kept")  # a kill -9 leaves it: the block's end removes it
    (root / "kept").rename(root / SPILL_DIR)
    return root / SPILL_DIR


def test_the_next_command_keeps_the_seconds_every_client_finished_in_a_new_file(tmp_path: Path) -> None:
    output = tmp_path / "out" / "load.jsonl"
    output.parent.mkdir()
    output.write_text("the killed command's file\n")
    first = killed_load(tmp_path / "base", 11, output, lines=3)
    said = recover_killed_loads("stratabench run", tmp_path / "base")
    recovered = output.with_name("load.recovered.jsonl")
    assert said == [f"a killed `stratabench load` ({SPEC.cell_name}): kept the 3 s every client finished, "
                    f"as a partial cell: {recovered}"]
    assert not first.exists() and output.read_text() == "the killed command's file\n"
    (cell,) = load(recovered).cells
    assert cell.status == "failed" and cell.notes["partial"] is True
    assert cell.notes["recovered_by"] == "stratabench run"
    assert cell.error == ("killed (kill -9 or a crash; recovered by stratabench run) after 3 of 5 s: a partial cell "
                          "of the 3 intervals every client finished")
    assert [decode(h).get_total_count() for h in cell.notes["interval_histograms"]] == [2, 2, 2]
    assert cell.params == SPEC.cell_params() and cell.integrity is not None
    # Every read checked counts, as on the signal path: each client's last line's (9 and 12).
    assert cell.integrity.expected == "21 reads as written"
    # A second killed load of the same output: the recovered file is never overwritten.
    killed_load(tmp_path / "base", 12, output, lines=2)
    recover_killed_loads("stratabench clean", tmp_path / "base")
    assert len(load(recovered).cells) == 1
    assert str(load(output.with_name("load.recovered-2.jsonl")).cells[0].error).startswith("killed (")


def test_the_spill_of_a_running_load_is_left_alone_and_one_without_a_whole_second_keeps_nothing(
        tmp_path: Path) -> None:
    output = tmp_path / "load.jsonl"
    live = killed_load(tmp_path / "base", 21, output, lines=2)
    owner = os.open(live.parent / ".owner", os.O_RDWR)
    fcntl.flock(owner, fcntl.LOCK_EX)  # as the load that runs holds it
    try:
        assert recover_killed_loads("stratabench clean", tmp_path / "base") == []
        assert (live / "configuration.json").is_file()
    finally:
        os.close(owner)
    empty = killed_load(tmp_path / "other", 22, output, lines=0)
    assert recover_killed_loads("stratabench clean", tmp_path / "other") == [
        f"a killed `stratabench load` ({SPEC.cell_name}) finished no second in every client: nothing to keep"]
    assert not empty.exists() and not output.with_name("load.recovered.jsonl").exists()
    (empty.parent / SPILL_DIR).mkdir()
    (empty.parent / SPILL_DIR / "configuration.json").write_text(json.dumps({"spec": []}))
    (said,) = recover_killed_loads("stratabench clean", tmp_path / "other")
    assert said.startswith(f"the seconds a killed load left in {empty} could not be kept: ")


@pytest.mark.parametrize("command", [
    ["clean", "--store", "memory://"],
    ["load", "--store", "memory://", "--duration", "0.2", "--warmup", "0", "-q", "-o", "{tmp}/next.jsonl"],
    ["run", "matrix", "--data", "{tmp}/records.jsonl", "--codec", "json", "--compressor", "none", "--samples", "2",
     "--min-time", "0.001", "--in-process", "-q", "-o", "{tmp}/next.jsonl"],
    ["ab", "timeit", "--b=timeit.stmt=pass", "--rounds", "2", "--samples", "1", "--min-time", "0.001",
     "--in-process", "-q", "-o", "{tmp}/next.jsonl"],
])  # fmt: skip
def test_the_next_load_run_ab_or_clean_keeps_what_a_killed_load_spilled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        command: list[str]) -> None:
    from stratabench.cli.main import main
    from stratabench.scratch import scratch_base

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    (tmp_path / "records.jsonl").write_text('{"a": 1}\n{"a": 2}\n')
    output = tmp_path / "killed.jsonl"
    spilled = killed_load(scratch_base(), 31, output, lines=2)
    assert main([part.format(tmp=tmp_path) for part in command]) == 0
    recovered = tmp_path / "killed.recovered.jsonl"
    assert f"kept the 2 s every client finished, as a partial cell: {recovered}" in capsys.readouterr().err
    assert not spilled.exists()
    (cell,) = load(recovered).cells
    assert cell.notes["recovered_by"] == f"stratabench {command[0]}"
