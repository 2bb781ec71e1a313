"""The services state file: private, locked, and harmless when damaged or absent."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from stratabench.errors import ServiceError
from stratabench.services import state
from stratabench.services.base import RunningService


@pytest.fixture
def path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "dir" / "services.json"
    monkeypatch.setenv(state.STATE_ENV, str(where))
    return where


def entry(pid: int) -> RunningService:
    return RunningService(
        name="redis", url="redis://:pw@127.0.0.1:5/0", pids=(pid,), port=5, workdir="/nonexistent",
        executable="/bin/false", create_times=(0.0,),
    )  # fmt: skip


def test_record_and_remove(path: Path) -> None:
    assert state.load() == []
    state.record(entry(1))
    state.record(entry(1))  # the same server once
    state.record(entry(2))
    assert [s.pids for s in state.load()] == [(1,), (2,)]
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    state.remove([entry(1)])
    assert [s.pids for s in state.load()] == [(2,)]


def test_dead_servers_have_no_pids(path: Path) -> None:
    state.record(entry(os.getpid()))  # our pid, but not the recorded executable and start time
    assert state.pids_for_address("127.0.0.1", 5) == ()
    assert state.pids_for_address("db.example", 5) == ()
    assert state.pids_for_address(None, None) == ()


def test_damaged_file(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(ServiceError, match="delete it"):
        state.load()
    assert state.pids_for_address("127.0.0.1", 5) == ()


def test_a_server_keeps_the_servers_it_runs_on(path: Path) -> None:
    backing = dataclasses.replace(entry(3), name="postgresql", url="postgresql://u:secret@127.0.0.1:6/postgres")
    state.record(dataclasses.replace(entry(4), name="mongodb", under=(backing,)))
    (loaded,) = state.load()
    assert loaded.under == (backing,)
    assert [part.name for part in loaded.each()] == ["mongodb", "postgresql"]
    assert "secret" not in str(loaded.describe())
