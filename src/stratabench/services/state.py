"""The state file: which private servers are running, across commands.

``stratabench services up`` records each server it started, so that a later
``services status`` or ``services down`` finds it, and so that a store
opened on one of their URLs knows the server's process ids (for
``server_cpu_ns``). ``run --services local`` records its servers for the
length of the run, for its worker processes.

The file holds the servers' URLs with their passwords, so it is created
with mode 0600 in a directory of mode 0700. It lives at
``$STRATABENCH_SERVICES_STATE`` if set, else
``$XDG_RUNTIME_DIR/stratabench/services.json``, else
``~/.cache/stratabench/services.json``. Every change happens under an
exclusive ``flock`` on a lock file beside it.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from stratabench.errors import ServiceError
from stratabench.services.base import RunningService

__all__ = ["STATE_ENV", "load", "pids_for_address", "record", "remove", "state_path"]

STATE_ENV = "STRATABENCH_SERVICES_STATE"
_LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1", "[::1]"}


def state_path() -> Path:
    """Where the state file is (it need not exist)."""
    override = os.environ.get(STATE_ENV)
    if override:
        return Path(override)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime and os.path.isdir(runtime) else Path.home() / ".cache"
    return base / "stratabench" / "services.json"


def _read(path: Path) -> list[RunningService]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise ServiceError(f"cannot read the services state file {path}: {exc}; delete it if it is damaged") from None
    return [RunningService.from_json(entry) for entry in data.get("services", [])]


@contextmanager
def _locked(path: Path, *, write: bool) -> Iterator[None]:
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # mkdir's mode does not apply to a directory that already exists (the
        # dataset cache may have made ~/.cache/stratabench first, 0755).
        if path.parent.stat().st_uid == os.geteuid():
            os.chmod(path.parent, 0o700)
        lock = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise ServiceError(f"cannot use the services state file {path}: {exc}; set {STATE_ENV} to a writable path") from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX if write else fcntl.LOCK_SH)
        yield
    finally:
        os.close(lock)


def load() -> list[RunningService]:
    """Every recorded server, running or not."""
    path = state_path()
    if not path.exists():
        return []
    with _locked(path, write=False):
        return _read(path)


def _update(change: Callable[[list[RunningService]], list[RunningService]]) -> None:
    path = state_path()
    with _locked(path, write=True):
        services = change(_read(path))
        temporary = path.with_suffix(".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump({"services": [service.to_json() for service in services]}, out, indent=1)
        os.replace(temporary, path)


def _same(a: RunningService, b: RunningService) -> bool:
    return a.name == b.name and a.pids == b.pids and a.create_times == b.create_times


def record(service: RunningService) -> None:
    """Add a started server to the state file."""
    _update(lambda services: [s for s in services if not _same(s, service)] + [service])


def remove(gone: list[RunningService]) -> None:
    """Drop stopped servers from the state file."""
    _update(lambda services: [s for s in services if not any(_same(s, g) for g in gone)])


def pids_for_address(host: str | None, port: int | None) -> tuple[int, ...]:
    """Process ids of a recorded, running server at ``host:port``; ``()`` if none.

    Never raises: not knowing the pids only means no ``server_cpu_ns``.
    """
    if host is None or port is None or host.lower() not in _LOOPBACK_NAMES:
        return ()
    try:
        for service in load():
            if service.port == port and service.alive():
                return service.pids
    except (OSError, ValueError, ServiceError):
        pass
    return ()
