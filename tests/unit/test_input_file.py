"""Files the user names: regular files only, read within a limit (issue 27, items 4 and 5)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stratabench.errors import DataError, ResultsFormatError
from stratabench.input_file import read_input_file


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abc")
    assert read_input_file(tmp_path / "f", limit=3, what="a file") == b"abc"


@pytest.mark.parametrize(("make", "kind"), [
    (lambda p: os.mkfifo(p), "a FIFO (named pipe)"),
    (lambda p: p.mkdir(), "a directory"),
    (lambda p: p.symlink_to("/dev/zero"), "a character device"),
])
def test_special_files_are_named_and_never_read(tmp_path: Path, make: object, kind: str) -> None:
    path = tmp_path / "x.jsonl"
    make(path)  # type: ignore[operator]
    with pytest.raises(ResultsFormatError, match=f"x.jsonl: is {kind.replace('(', '.').replace(')', '.')}; give a"):
        read_input_file(path, limit=10, what="a results file", error=ResultsFormatError)


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    huge = tmp_path / "huge"
    with huge.open("wb") as file:
        file.truncate(10**12)  # sparse: a terabyte that takes no disk
    with pytest.raises(DataError, match=r"huge: 1000.00 GB is over the 1.0 kB this reads"):
        read_input_file(huge, limit=1000, what="a file")


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="nope: no such file; give a file"):
        read_input_file(tmp_path / "nope", limit=10, what="a file")
