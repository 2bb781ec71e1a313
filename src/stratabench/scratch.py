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

"Gone" is decided by a lock, not by the pid (which the system reuses): the
owner holds an exclusive ``flock`` on ``<root>/.owner`` for its whole life,
and the kernel releases it when the process ends, however it ends. A root
whose lock can be taken has no owner any more.

A root is renamed (``<root>.removing``, atomic) before it is removed. A run
killed in the middle of removing one would otherwise leave a root without
its ``.owner`` file and freshly modified, which looks like a root being made
right now: the next run would leave it for a minute. A ``.removing``
directory is always a leftover, and is swept whatever its age.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from stratabench.errors import OutputError

__all__ = ["BASE_NAME", "RAM_DIR_ENV", "run_scratch", "scratch_base", "sweep"]

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


def _owner_gone(root: Path) -> bool:
    try:
        fd = os.open(root / _OWNER_FILE, os.O_RDWR)
    except FileNotFoundError:
        # Killed between making the root and locking it, or a run that is
        # making it right now: only an old root without an owner is a leftover.
        return time.time() - root.stat().st_mtime > _UNOWNED_GRACE_S
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def sweep(base: Path | None = None) -> list[Path]:
    """Remove the run roots under ``base`` whose owner process has ended; return them."""
    base = scratch_base() if base is None else base
    removed: list[Path] = []
    try:
        entries = list(base.iterdir())
    except OSError:
        return removed
    for root in entries:
        name = root.name.removesuffix(_REMOVING)
        if not _ROOT_NAME.match(name) or root.is_symlink() or not root.is_dir():
            continue
        if root.stat().st_uid != os.geteuid():
            continue
        if name == root.name and not _owner_gone(root):
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
        try:
            ram = _owned_root(ram_base, name)
        except OSError:
            ram = None  # studies fall back to the temporary root, which is swept too
    global _active_base
    saved = tempfile.tempdir, os.environ.get("TMPDIR"), os.environ.get(RAM_DIR_ENV), _active_base
    _active_base = base
    tempfile.tempdir = str(root)
    os.environ["TMPDIR"] = str(root)
    os.environ[RAM_DIR_ENV] = str(ram[0] if ram is not None else root)
    try:
        yield root
    finally:
        tempfile.tempdir, _active_base = saved[0], saved[3]
        for variable, value in (("TMPDIR", saved[1]), (RAM_DIR_ENV, saved[2])):
            if value is None:
                os.environ.pop(variable, None)
            else:
                os.environ[variable] = value
        for made, lock in (root, owner), *([ram] if ram is not None else []):
            _remove(made)
            os.close(lock)
