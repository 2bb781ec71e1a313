"""Set-up that a run's workers make once and share, in files, instead of once per visit.

Every visit of a cell (each round's fresh worker) builds its operation
again. Where that set-up is the same in every visit and costly, the first
visit writes it to a directory the run's workers share and the later ones
read it back: bulkload's 10,000 records encoded by each codec took about
1.2 s of every round, re-encoded by each of a codec's cells in each round.

The directory is named by :data:`SHARED_DIR_ENV` in a worker's
environment; the engine's zygotes set it (one directory per
:class:`~stratabench.engine.zygote.Zygotes`, removed with them) and it
lives inside the run's temporary root, so it never outlives a run and
nothing in it can be stale: unlike the build cache
(:mod:`stratabench.build_cache`), it needs no key beyond what the caller
names. A worker without it (``--spawn``, ``--in-process``, a test) makes
its own every time, as before.

The first visit makes the bytes in a child forked for it, then reads them
back as every later visit does: made in the worker itself, the making
(10,000 records encoded) left that worker's allocators in another state
than a reader's, and the one visit of each format that made its asset
timed otherwise. Exact counts, the minor page faults of a load's sample (two
operations, after the same warm-up) in the visit that made the asset against
a later round's: fastavro/raw 687 against 1,458, flatbuffers/table access 10
against 328, json/typed 2,784 against 3,270; made in a child, 1,422 against
1,414, 334 against 328, 2,993 against 2,989. In three runs, 9 of the 75
makers had a round 0 under 0.9x their median, 1 of the 90 other round-0
visits. A worker that runs other threads makes them in itself
(:func:`single_threaded`).

Only what is a pure function of its name belongs here: the caller's name
must carry everything the bytes depend on (a codec, its mode, the dataset's
size and seed), since the run's one environment fixes the rest (the
libraries and their versions).
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path

__all__ = ["SHARED_DIR_ENV", "forked", "made_once", "shared_dir", "single_threaded"]

#: The environment variable that names the run's shared directory to its workers.
SHARED_DIR_ENV = "STRATABENCH_SHARED_DIR"


def shared_dir() -> Path | None:
    """The run's shared directory, or ``None`` in a worker that has none (then nothing is shared)."""
    value = os.environ.get(SHARED_DIR_ENV)
    return Path(value) if value else None


def made_once(name: str, make: Callable[[], bytes]) -> bytes:
    """The bytes ``make`` returns, made by the run's first worker that asks for ``name`` and read back by the rest.

    ``name`` must be a file name (no ``/``) that determines the bytes. The
    first makes them in a child forked for it where it can (the module
    docstring says why) and reads them back. A worker writes them whole or
    not at all (a partial file, then a rename),
    so one killed mid-write leaves nothing a later worker would read. With
    no shared directory, or one that cannot be written, ``make`` runs every
    time.
    """
    if "/" in name or name in ("", ".", ".."):
        raise ValueError(f"not a file name: {name!r}")
    directory = shared_dir()
    if directory is None:
        return make()
    kept = directory / name
    try:
        return kept.read_bytes()
    except FileNotFoundError:
        pass
    if _made_apart(kept, make):
        try:
            return kept.read_bytes()
        except FileNotFoundError:
            pass  # the child could not keep them (a full or vanished directory): made here, as before
    data = make()
    _keep(kept, data)
    return data


def _keep(kept: Path, data: bytes) -> None:
    """Write ``data`` to ``kept`` whole or not at all (a partial file, then a rename)."""
    try:
        partial = kept.with_name(f".{kept.name}.{os.getpid()}.partial")
        partial.write_bytes(data)
        partial.replace(kept)
    except OSError:
        pass  # a full or vanished directory costs the next visit a make, nothing more


def _made_apart(kept: Path, make: Callable[[], bytes]) -> bool:
    """Whether a child forked for it made and kept the bytes (the module docstring says why); never in a process
    that runs other threads."""
    if not single_threaded():
        return False

    def keep() -> int:
        _keep(kept, make())
        return 0

    _, status = os.waitpid(forked(keep), 0)
    return os.waitstatus_to_exitcode(status) == 0


def forked(work: Callable[[], int]) -> int:
    """Fork a child that runs ``work`` and exits at once with its code; the child's pid, in the parent.

    The child never returns into the caller's code (``os._exit``: no exit
    handler, no cleanup of what the parent owns); if ``work`` raises, its
    traceback goes to stderr and the child exits with 1. Buffered output is
    flushed before the fork, so that neither process writes the other's.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's lines run in the fork, which coverage does not follow
        code = 1
        try:
            code = work()
        except BaseException:  # noqa: BLE001 - the child reports it and exits; the parent decides what it means
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)  # never return into the caller's code
    return pid


def single_threaded() -> bool:
    """Whether this process runs one thread only: every thread of Linux's ``/proc``, Python's own elsewhere.

    A child forked from a process with other threads inherits their locks and
    none of the threads, so only a single-threaded process forks one to work in.
    """
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return threading.active_count() == 1
