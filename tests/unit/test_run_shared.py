"""Set-up a run's workers make once: the first asks, the rest read it back; without the directory, each makes its own."""

from __future__ import annotations

from pathlib import Path

import pytest

import stratabench.run_shared as run_shared
from stratabench.run_shared import SHARED_DIR_ENV, made_once, shared_dir


class Maker:
    """Counts its calls: how many times the bytes were made."""

    def __init__(self, data: bytes) -> None:
        self.data, self.calls = data, 0

    def __call__(self) -> bytes:
        self.calls += 1
        return self.data


def test_with_a_shared_directory_the_bytes_are_made_once_whole_and_read_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SHARED_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(run_shared, "single_threaded", lambda: False)  # made here, where the calls are counted
    json, msgpack = Maker(b"[1, 2]"), Maker(b"\x92\x01\x02")
    got = [made_once("json.bin", json), made_once("msgpack.bin", msgpack), made_once("json.bin", json),
           made_once("json.bin", json)]
    assert got == [b"[1, 2]", b"\x92\x01\x02", b"[1, 2]", b"[1, 2]"]
    assert (json.calls, msgpack.calls) == (1, 1)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["json.bin", "msgpack.bin"]  # no partial file left


def test_a_single_threaded_worker_makes_them_in_a_child_and_reads_them_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Made in the worker, the making left its allocators otherwise than a reader's: its visit timed otherwise.
    monkeypatch.setenv(SHARED_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(run_shared, "single_threaded", lambda: True)
    maker = Maker(b"[1, 2]")
    assert [made_once("json.bin", maker), made_once("json.bin", maker)] == [b"[1, 2]", b"[1, 2]"]
    assert maker.calls == 0  # never in this process: the child made them
    assert (tmp_path / "json.bin").read_bytes() == b"[1, 2]"


def test_a_maker_that_fails_in_the_child_fails_in_the_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SHARED_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(run_shared, "single_threaded", lambda: True)

    def broken() -> bytes:
        raise RuntimeError("no codec")

    with pytest.raises(RuntimeError, match="no codec"):
        made_once("x.bin", broken)
    assert list(tmp_path.iterdir()) == []


def test_without_a_shared_directory_every_call_makes_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SHARED_DIR_ENV, raising=False)
    maker = Maker(b"x")
    assert [made_once("x.bin", maker) for _ in range(3)] == [b"x"] * 3
    assert maker.calls == 3 and shared_dir() is None


def test_a_directory_that_cannot_be_written_costs_a_make_not_the_cell(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SHARED_DIR_ENV, str(tmp_path / "removed"))
    maker = Maker(b"x")
    assert [made_once("x.bin", maker) for _ in range(2)] == [b"x", b"x"]
    assert maker.calls == 2


@pytest.mark.parametrize("name", ["", "..", "a/b"])
def test_a_name_must_be_a_file_name(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SHARED_DIR_ENV, str(tmp_path))
    with pytest.raises(ValueError, match="not a file name"):
        made_once(name, Maker(b""))
