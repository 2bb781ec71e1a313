"""Set-up a run's workers make once: the first asks, the rest read it back; without the directory, each makes its own."""

from __future__ import annotations

from pathlib import Path

import pytest

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
    json, msgpack = Maker(b"[1, 2]"), Maker(b"\x92\x01\x02")
    got = [made_once("json.bin", json), made_once("msgpack.bin", msgpack), made_once("json.bin", json),
           made_once("json.bin", json)]
    assert got == [b"[1, 2]", b"\x92\x01\x02", b"[1, 2]", b"[1, 2]"]
    assert (json.calls, msgpack.calls) == (1, 1)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["json.bin", "msgpack.bin"]  # no partial file left


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
