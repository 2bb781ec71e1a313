"""One temporary directory per run, which the next run sweeps once its owner is gone.

Cells, workers, private servers and the Go program all make temporary
directories, and ``kill -9`` leaves every one of them behind. A run
therefore points :mod:`tempfile` and ``TMPDIR`` (which its child processes
inherit, the Go program included) at a root of its own,
``$TMPDIR/stratabench/<run-id>-<pid>/``, removes it when it ends, and first
sweeps the roots of earlier runs whose process is gone.

Files some studies keep in RAM (``/dev/shm``: the tree-store study's SQLite
and JSON files) get the same treatment: a second root,
``/dev/shm/stratabench-UID/<run-id>-<pid>/``, named to children by
``$STRATABENCH_RAM_DIR``, owned, removed and swept alike. Before it, a
killed run left its files in ``/dev/shm``, holding RAM until a reboot.

multiprocessing (the load clients) leaves two more kinds of things behind
after ``kill -9``: its temporary directory (``$TMPDIR/pymp-*``, the fork
server's socket) and its named semaphores (``/dev/shm/sem.*``, one per
lock, barrier and queue; when the whole process group is killed, the
resource tracker that would unlink them dies too). Neither can live in a
run's root: the fork server outlives a run inside one process. So a
process that starts clients claims them (:func:`claim_multiprocessing`):
its semaphores get names of its own, ``stratabench-mp.<token>-*``, and a
lock file ``mp-<token>.owner`` in the RAM base names its temporary
directory. A run's start sweeps the semaphores and the directory of every
claim whose lock is free; semaphores and directories of other programs
are never touched.

"Gone" is decided by a lock, not by the pid (which the system reuses): the
owner holds an exclusive ``flock`` on ``<root>/.owner`` for its whole life,
and the kernel releases it when the process ends, however it ends. A root
whose lock can be taken has no owner any more.

A killed run may leave something to keep rather than sweep (the seconds a
load's clients spilled: :mod:`stratabench.load.recovery`);
:func:`leftovers` hands it over with the root's lock held, before the sweep.

A root is renamed (``<root>.removing``, atomic) before it is removed. A run
killed in the middle of removing one would otherwise leave a root without
its ``.owner`` file and freshly modified, which looks like a root being made
right now: the next run would leave it for a minute. A ``.removing``
directory is always a leftover, and is swept whatever its age.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import re
import secrets
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from stratabench.errors import OutputError

__all__ = ["BASE_NAME", "RAM_DIR_ENV", "claim_multiprocessing", "leftovers", "run_scratch", "scratch_base", "sweep",
           "sweep_multiprocessing"]

BASE_NAME = "stratabench"
_OWNER_FILE = ".owner"
_UNOWNED_GRACE_S = 60.0
_ROOT_NAME = re.compile(r"^[A-Za-z0-9_.-]+-\d+$")
_REMOVING = ".removing"
RAM_DIR_ENV = "STRATABENCH_RAM_DIR"
"""The run's directory in RAM, for children; unset when the system has none."""
_SHM = Path("/dev/shm")


def _private_mode() -> int:
    # Servers run as `nobody` under root and need to pass through to their
    # own 0700 directories below: traverse, but never list.
    return 0o711 if os.geteuid() == 0 else 0o700


# The base of the run in progress: inside it, tempfile points at the run's root.
_active_base: Path | None = None
# The temporary directory outside the run in progress: where multiprocessing's own goes.
_outer_tempdir: str | None = None

#: A claim of multiprocessing's leftovers: ``mp-<pid>.<hex>.owner`` (``.mp-...claim`` while being made).
_CLAIM = re.compile(r"^(\.?)mp-(\d+\.[0-9a-f]{8})\.(owner|claim)$")
_SEMAPHORE_PREFIX = "stratabench-mp."
# This process's claim: (pid, token, lock fd); a forked child is not its owner.
_claim: tuple[int, str, int] | None = None


def scratch_base() -> Path:
    """``$TMPDIR/stratabench``: where run roots live (it need not exist).

    When that name is taken by another user or is a symbolic link (a shared
    ``/tmp``), ``$TMPDIR/stratabench-UID`` instead: a run never works inside
    a directory someone else controls.
    """
    if _active_base is not None:
        return _active_base
    base = Path(tempfile.gettempdir()) / BASE_NAME
    try:
        info = base.lstat()
    except FileNotFoundError:
        return base
    except OSError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid():
        return base
    return base.with_name(f"{BASE_NAME}-{os.geteuid()}")


def _make_private_dir(path: Path) -> None:
    path.mkdir(mode=_private_mode(), exist_ok=True)
    if path.stat().st_uid == os.geteuid():
        os.chmod(path, _private_mode())  # an older or foreign umask may have widened it


def _lock_of_gone_owner(root: Path) -> int | None:
    """The owner lock of ``root``, taken (an open fd), once its owner has ended; ``None`` while it lives."""
    try:
        fd = os.open(root / _OWNER_FILE, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _owner_gone(root: Path) -> bool:
    if not (root / _OWNER_FILE).exists():
        # Killed between making the root and locking it, or a run that is
        # making it right now: only an old root without an owner is a leftover.
        return time.time() - root.stat().st_mtime > _UNOWNED_GRACE_S
    fd = _lock_of_gone_owner(root)
    if fd is None:
        return False
    os.close(fd)
    return True


def _roots(base: Path) -> list[Path]:
    """The run roots under ``base`` that are this user's own directories (a ``.removing`` one among them)."""
    try:
        entries = list(base.iterdir())
    except OSError:
        return []
    return [root for root in entries
            if _ROOT_NAME.match(root.name.removesuffix(_REMOVING)) and not root.is_symlink() and root.is_dir()
            and root.stat().st_uid == os.geteuid()]  # fmt: skip


def leftovers(name: str, base: Path | None = None) -> Iterator[Path]:
    """``<root>/<name>`` of every run root under ``base`` whose owner has ended, while the caller rescues it.

    A killed run may leave something worth more than a sweep: its root's
    ``name`` is yielded with the root's owner lock held until the next one
    is asked for, so a sweep (this process's or another's) leaves the root
    alone meanwhile, and two processes never rescue the same thing. What is
    yielded is the caller's to read and remove; the root goes with the
    next sweep. ``base`` defaults to :func:`scratch_base`.
    """
    for root in _roots(scratch_base() if base is None else base):
        if root.name.endswith(_REMOVING) or not (root / name).exists():
            continue
        lock = _lock_of_gone_owner(root)
        if lock is None:
            continue
        try:
            yield root / name
        finally:
            os.close(lock)


def sweep(base: Path | None = None) -> list[Path]:
    """Remove the run roots under ``base`` whose owner process has ended; return them."""
    removed: list[Path] = []
    for root in _roots(scratch_base() if base is None else base):
        if not root.name.endswith(_REMOVING) and not _owner_gone(root):
            continue
        if _remove(root):
            removed.append(root)
    return removed


def _remove(root: Path) -> bool:
    """Rename ``root`` to its ``.removing`` name, then remove it; whether it is gone."""
    doomed = root
    if not root.name.endswith(_REMOVING):
        doomed = root.with_name(root.name + _REMOVING)
        try:
            root.rename(doomed)
        except FileNotFoundError:
            return False  # another run's sweep took it first
        except OSError:
            doomed = root
    shutil.rmtree(doomed, ignore_errors=True)
    return not doomed.exists()


def claim_multiprocessing() -> None:
    """Name this process's multiprocessing semaphores and temporary directory as its own (see the module docstring).

    Call it before the first lock, barrier or queue is made; later calls do
    nothing. Where there is no RAM directory (no ``/dev/shm``), it does
    nothing either, and multiprocessing keeps its own names.
    """
    global _claim
    if _claim is not None and _claim[0] == os.getpid():
        return
    base = _ram_base()
    if base is None:
        return
    import multiprocessing
    import multiprocessing.util

    saved = tempfile.tempdir
    tempfile.tempdir = _outer_tempdir if _outer_tempdir is not None else saved
    try:
        # Outside a run's root: multiprocessing removes it at exit, after the root is gone.
        directory = multiprocessing.util.get_temp_dir()
    finally:
        tempfile.tempdir = saved
    token = f"{os.getpid()}.{secrets.token_hex(4)}"
    try:
        _make_private_dir(base)
        making = base / f".mp-{token}.claim"
        lock = os.open(making, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        fcntl.flock(lock, fcntl.LOCK_EX)
        os.write(lock, os.fsencode(directory))
        # Renamed once locked and written: a sweep never sees a claim that is not whole.
        os.rename(making, base / f"mp-{token}.owner")
    except OSError:
        return  # unclaimed, multiprocessing works as ever; only a kill -9 would leave its things
    # multiprocessing names a semaphore `<semprefix>-<random>` and has no public setting for the prefix.
    getattr(multiprocessing.current_process(), "_config")["semprefix"] = f"/{_SEMAPHORE_PREFIX}{token}"
    _claim = (os.getpid(), token, lock)
    atexit.register(_release_claim, base / f"mp-{token}.owner")


def _release_claim(owner: Path) -> None:
    # multiprocessing removes its directory and semaphores itself at a normal exit; the claim goes with them.
    if _claim is not None and _claim[0] == os.getpid():
        owner.unlink(missing_ok=True)


def sweep_multiprocessing(base: Path | None = None) -> list[Path]:
    """Remove the semaphores and temporary directories of claims under ``base`` whose owner has ended; return them.

    ``base`` defaults to the RAM base. Only this user's claims are read,
    only semaphores named after a claim and a ``pymp-*`` directory of this
    user are removed.
    """
    base = _ram_base() if base is None else base
    removed: list[Path] = []
    try:
        entries = list(base.iterdir()) if base is not None else []
    except OSError:
        return removed
    for claim in entries:
        match = _CLAIM.match(claim.name)
        if match is None or claim.is_symlink() or not claim.is_file() or claim.stat().st_uid != os.geteuid():
            continue
        if match[1] and time.time() - claim.stat().st_mtime <= _UNOWNED_GRACE_S:
            continue  # a claim being made right now
        try:
            lock = os.open(claim, os.O_RDWR | os.O_NOFOLLOW)
        except OSError:
            continue  # another run's sweep took it
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock)
            continue
        try:
            directory = Path(os.fsdecode(claim.read_bytes()))
            for semaphore in _SHM.glob(f"sem.{_SEMAPHORE_PREFIX}{match[2]}-*"):
                if semaphore.lstat().st_uid == os.geteuid():
                    semaphore.unlink(missing_ok=True)
                    removed.append(semaphore)
            if (directory.is_absolute() and directory.name.startswith("pymp-") and not directory.is_symlink()
                    and directory.is_dir() and directory.stat().st_uid == os.geteuid()):
                shutil.rmtree(directory, ignore_errors=True)
                removed.append(directory)
            claim.unlink(missing_ok=True)
        except OSError:
            pass  # left for the next sweep
        finally:
            os.close(lock)
    return removed


def _ram_base() -> Path | None:
    """``/dev/shm/stratabench-UID`` when the system has a writable ``/dev/shm`` and that name is ours."""
    if not (_SHM.is_dir() and os.access(_SHM, os.W_OK | os.X_OK)):
        return None
    base = _SHM / f"{BASE_NAME}-{os.geteuid()}"
    try:
        info = base.lstat()
    except FileNotFoundError:
        return base
    except OSError:
        return None
    return base if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() else None


def _owned_root(base: Path, name: str) -> tuple[Path, int]:
    """Make ``base/name`` and hold its owner lock (the fd) for the run's life."""
    root = base / name
    _make_private_dir(base)
    _make_private_dir(root)
    owner = os.open(root / _OWNER_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    fcntl.flock(owner, fcntl.LOCK_EX)
    return root, owner


@contextlib.contextmanager
def run_scratch(run_id: str) -> Iterator[Path]:
    """Sweep leftovers, then make this run's root and send every temporary file there.

    Yields the root; on exit restores :mod:`tempfile` and ``TMPDIR`` and
    removes the root.

    Raises
    ------
    OutputError
        When the root cannot be made (a read-only ``TMPDIR``).
    """
    base = scratch_base()
    sweep(base)
    name = f"{re.sub(r'[^A-Za-z0-9_.-]', '_', run_id)}-{os.getpid()}"
    try:
        root, owner = _owned_root(base, name)
    except OSError as exc:
        raise OutputError(
            f"cannot make the run's temporary directory {base / name}: {exc.strerror or exc}; "
            "set TMPDIR to a writable directory"
        ) from None
    ram_base = _ram_base()
    ram: tuple[Path, int] | None = None
    if ram_base is not None:
        sweep(ram_base)
        sweep_multiprocessing(ram_base)
        try:
            ram = _owned_root(ram_base, name)
        except OSError:
            ram = None  # studies fall back to the temporary root, which is swept too
    global _active_base, _outer_tempdir
    saved = tempfile.tempdir, os.environ.get("TMPDIR"), os.environ.get(RAM_DIR_ENV), _active_base, _outer_tempdir
    _active_base, _outer_tempdir = base, _outer_tempdir or tempfile.gettempdir()
    tempfile.tempdir = str(root)
    os.environ["TMPDIR"] = str(root)
    os.environ[RAM_DIR_ENV] = str(ram[0] if ram is not None else root)
    try:
        yield root
    finally:
        tempfile.tempdir, _active_base, _outer_tempdir = saved[0], saved[3], saved[4]
        for variable, value in (("TMPDIR", saved[1]), (RAM_DIR_ENV, saved[2])):
            if value is None:
                os.environ.pop(variable, None)
            else:
                os.environ[variable] = value
        for made, lock in (root, owner), *([ram] if ram is not None else []):
            _remove(made)
            os.close(lock)
