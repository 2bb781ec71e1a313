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

Only what is a pure function of its name belongs here: the caller's name
must carry everything the bytes depend on (a codec, its mode, the dataset's
size and seed), since the run's one environment fixes the rest (the
libraries and their versions).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["SHARED_DIR_ENV", "made_once", "shared_dir"]

#: The environment variable that names the run's shared directory to its workers.
SHARED_DIR_ENV = "STRATABENCH_SHARED_DIR"


def shared_dir() -> Path | None:
    """The run's shared directory, or ``None`` in a worker that has none (then nothing is shared)."""
    value = os.environ.get(SHARED_DIR_ENV)
    return Path(value) if value else None


def made_once(name: str, make: Callable[[], bytes]) -> bytes:
    """The bytes ``make`` returns, made by the run's first worker that asks for ``name`` and read back by the rest.

    ``name`` must be a file name (no ``/``) that determines the bytes. A
    worker writes them whole or not at all (a partial file, then a rename),
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
    data = make()
    try:
        partial = kept.with_name(f".{name}.{os.getpid()}.partial")
        partial.write_bytes(data)
        partial.replace(kept)
    except OSError:
        pass  # a full or vanished directory costs the next visit a make, nothing more
    return data
