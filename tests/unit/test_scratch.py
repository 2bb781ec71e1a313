"""One temporary root per run, swept by the next run once its owner is gone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from stratabench.scratch import run_scratch, scratch_base, sweep


@pytest.fixture
def own_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    return tmp_path


def start_printing_a_path(script: str) -> tuple[subprocess.Popen[str], Path]:
    """Start ``script``, which prints a path then sleeps; return it and the path."""
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    return child, Path(child.stdout.readline().strip())


def kill_9(child: subprocess.Popen[str]) -> None:
    """SIGKILL: no clean-up of the child's runs."""
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert child.stdout is not None
    child.stdout.close()


def test_a_run_sends_temporary_files_to_its_root_and_removes_it(own_tmp: Path) -> None:
    with run_scratch("20261122-101010-abcd") as root:
        assert root == own_tmp / "stratabench" / f"20261122-101010-abcd-{os.getpid()}"
        assert oct(root.stat().st_mode & 0o777) in ("0o700", "0o711")
        made = Path(tempfile.mkdtemp(prefix="cell-"))
        assert made.parent == root and os.environ["TMPDIR"] == str(root)
        # A child process (a worker, the Go program) inherits it.
        child = subprocess.run([sys.executable, "-c", "import tempfile; print(tempfile.gettempdir())"],
                               capture_output=True, text=True, check=True)
        assert child.stdout.strip() == str(root)
    assert not root.exists()
    assert os.environ["TMPDIR"] == str(own_tmp) and tempfile.gettempdir() == str(own_tmp)


def test_the_next_run_sweeps_the_root_of_a_killed_run(own_tmp: Path) -> None:
    script = textwrap.dedent("""
        import sys, tempfile, time
        from stratabench.scratch import run_scratch
        with run_scratch("20261122-101010-dead") as root:
            (root / "big").write_bytes(b"x" * 100000)
            print(root, flush=True)
            time.sleep(60)
    """)
    killed, leftover = start_printing_a_path(script)
    with run_scratch("20261122-101010-live") as live:
        # Its owner still runs: not swept, neither is ours.
        assert sweep() == [] and leftover.is_dir() and live.is_dir()
        kill_9(killed)
        assert leftover.is_dir()  # kill -9 ran no clean-up
        assert sweep() == [leftover]
        assert not leftover.exists() and live.is_dir()


def test_sweep_leaves_what_is_not_a_run_root(own_tmp: Path) -> None:
    base = scratch_base()
    base.mkdir()
    foreign = base / "notes"  # no -PID suffix
    foreign.mkdir()
    fresh = base / "20261122-101010-ffff-999999"  # a run making its root right now: no owner file yet
    fresh.mkdir()
    old = base / "20261122-101010-eeee-999998"
    old.mkdir()
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    assert sweep() == [old]
    assert foreign.is_dir() and fresh.is_dir()


def test_a_root_half_removed_by_a_killed_sweep_is_swept_at_once(
    own_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A sweep renames a root before removing it: a run killed mid-removal leaves a name that says so,
    # not a fresh root without its owner file (which the grace would keep for a minute).
    import stratabench.scratch as scratch

    base = scratch_base()
    base.mkdir()
    leftover = base / "20261122-101010-cccc-999997"
    leftover.mkdir()
    (leftover / ".owner").touch()
    (leftover / "data").write_bytes(b"x")
    removed_paths: list[Path] = []

    def killed_mid_removal(path: Path, ignore_errors: bool = False) -> None:
        removed_paths.append(Path(path))
        (Path(path) / ".owner").unlink()  # as far as the killed sweep got

    with monkeypatch.context() as patched:
        patched.setattr(scratch.shutil, "rmtree", killed_mid_removal)
        assert sweep() == []
    half = base / "20261122-101010-cccc-999997.removing"
    assert removed_paths == [half] and half.is_dir() and not leftover.exists()
    assert sweep() == [half]
    assert list(base.iterdir()) == []


def test_a_base_that_is_not_ours_is_not_used(own_tmp: Path) -> None:
    elsewhere = own_tmp / "elsewhere"
    elsewhere.mkdir()
    (own_tmp / "stratabench").symlink_to(elsewhere)  # as another user could plant in a shared /tmp
    with run_scratch("20261122-101010-abcd") as root:
        assert root.parent == own_tmp / f"stratabench-{os.geteuid()}"
    assert list(elsewhere.iterdir()) == []


def test_an_unwritable_tmpdir_is_one_line(own_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stratabench.errors import OutputError

    monkeypatch.setenv("TMPDIR", str(own_tmp / "missing" / "dir"))
    monkeypatch.setattr(tempfile, "tempdir", str(own_tmp / "missing" / "dir"))
    with pytest.raises(OutputError, match="cannot make the run's temporary directory .*set TMPDIR"):
        with run_scratch("20261122-101010-abcd"):
            pass


def test_a_run_has_a_root_in_ram_that_the_next_run_sweeps(own_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Studies that keep files in /dev/shm write them in the run's RAM root, which kill -9 leaves behind.
    import stratabench.scratch as scratch

    shm = own_tmp / "shm"
    shm.mkdir()
    monkeypatch.setattr(scratch, "_SHM", shm)
    monkeypatch.delenv(scratch.RAM_DIR_ENV, raising=False)
    script = textwrap.dedent(f"""
        import os, pathlib, time
        import stratabench.scratch as scratch
        scratch._SHM = pathlib.Path({str(shm)!r})
        with scratch.run_scratch("20261122-101010-dead"):
            ram = pathlib.Path(os.environ[scratch.RAM_DIR_ENV])
            (ram / "tree.sqlite").write_bytes(b"x" * 1000)
            print(ram, flush=True)
            time.sleep(60)
    """)
    killed, leftover = start_printing_a_path(script)
    assert leftover.parent == shm / f"stratabench-{os.geteuid()}" and (leftover / "tree.sqlite").is_file()
    kill_9(killed)
    with run_scratch("20261122-101010-live") as root:
        ram = Path(os.environ[scratch.RAM_DIR_ENV])
        assert not leftover.exists(), "the next run did not sweep the killed run's RAM root"
        assert ram.parent == leftover.parent and ram.name == root.name
    assert not ram.exists() and scratch.RAM_DIR_ENV not in os.environ


def test_the_next_run_sweeps_the_semaphores_and_directory_of_a_killed_runs_clients(own_tmp: Path) -> None:
    # Issue 27, item 6: a load killed with its process group (the resource tracker too) left its semaphores in
    # /dev/shm and its pymp-* directory; a claim names them, and the next run's sweep removes them once the
    # claim's owner has ended, never before.
    import stratabench.scratch as scratch

    if scratch._ram_base() is None:
        pytest.skip("no writable /dev/shm: multiprocessing keeps its own names")
    script = textwrap.dedent("""
        import multiprocessing, multiprocessing.util, time
        from stratabench.scratch import claim_multiprocessing
        claim_multiprocessing()
        lock = multiprocessing.get_context("forkserver").Lock()
        print(multiprocessing.util.get_temp_dir(), flush=True)
        time.sleep(60)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        assert child.stdout is not None
        directory = Path(child.stdout.readline().strip())
        semaphores = list(Path("/dev/shm").glob(f"sem.stratabench-mp.{child.pid}.*"))
        assert len(semaphores) == 1 and directory.parent == own_tmp and directory.name.startswith("pymp-")
        assert not {directory, *semaphores} & set(scratch.sweep_multiprocessing()), "swept while its owner runs"
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        assert directory.is_dir() and semaphores[0].exists()  # kill -9 of the group ran no clean-up
        assert {directory, *semaphores} <= set(scratch.sweep_multiprocessing())
        assert not directory.exists() and not semaphores[0].exists()
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
        if child.stdout is not None:
            child.stdout.close()
