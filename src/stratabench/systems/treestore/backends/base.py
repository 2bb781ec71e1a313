"""The backend interface of docs/studies/treestore.md §5, and what every backend shares.

A backend stores one module's data per datastore inside the run's own
namespace, opened from a URL (servers) or a directory (files). It never
touches anything outside that namespace: :meth:`TreeBackend.cleanup`
removes the namespace and nothing else, so a user's data in the same server
survives a run.

Driver failures become one-line :class:`~stratabench.errors.StoreError`
through :meth:`TreeBackend.guard`, naming the backend, its (redacted) URL
and what to check.
"""

from __future__ import annotations

import os
import re
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from stratabench.errors import StoreError, StratabenchError, UsageError
from stratabench.redact import redact, scrub
from stratabench.scratch import RAM_DIR_ENV
from stratabench.systems.treestore.diff import Diff
from stratabench.systems.treestore.records import Scope
from stratabench.systems.treestore.schema import SchemaNode
from stratabench.systems.treestore.tree import Inner

__all__ = ["OPERATIONAL", "RUNNING", "Access", "Owner", "TreeBackend", "permitted", "ram_directory"]

RUNNING = "running"
OPERATIONAL = "operational"

Owner = tuple[int, int]
"""(connection id, session id) of operational push data."""

_NAMESPACE = re.compile(r"^[a-z0-9_]{1,40}$")


@dataclass(frozen=True)
class Access:
    """Owner, group and permission bits a module is installed with."""

    uid: int
    gid: int
    mode: int

    @classmethod
    def current_user(cls, mode: int = 0o600) -> Access:
        return cls(os.geteuid(), os.getegid(), mode)


def permitted(uid: int, gid: int, mode: int) -> tuple[bool, bool]:
    """(may read, may write) for this process, from owner, group and mode bits, as the sysrepo plugins compare."""
    me = os.geteuid()
    if me == 0:
        return True, True
    if me == uid:
        bits = mode >> 6
    elif gid == os.getegid() or gid in os.getgroups():
        bits = mode >> 3
    else:
        bits = mode
    return bool(bits & 4), bool(bits & 2)


def ram_directory() -> Path:
    """A RAM-backed temporary directory where the OS has one (sysrepo keeps its files in shared memory)."""
    shm = Path(os.environ.get(RAM_DIR_ENV, "/dev/shm"))  # a run's own, which the next run sweeps
    if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return Path(tempfile.gettempdir())


def filesystem_type(path: Path) -> str:
    """The filesystem type of ``path`` from /proc/mounts (``unknown`` elsewhere)."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return "unknown"
    best, kind = "", "unknown"
    target = str(path.resolve())
    for line in mounts:
        fields = line.split()
        if len(fields) > 2 and (target == fields[1] or target.startswith(fields[1].rstrip("/") + "/")) \
                and len(fields[1]) > len(best):
            best, kind = fields[1], fields[2]
    return kind


class TreeBackend(ABC):
    """Stores one module tree per datastore, and push data per owner.

    Parameters
    ----------
    namespace
        The run's prefix: lowercase letters, digits and ``_``. Every name the
        backend creates (file, key prefix, database, table rows) carries it.
    url
        The server's URL for server backends; ``None`` for embedded ones.
    directory
        Where embedded backends keep files; ``None`` picks their default.
    """

    name: ClassVar[str]
    atomic: ClassVar[bool] = False
    """Whether a commit becomes visible to readers all at once."""
    service: ClassVar[str | None] = None
    """The ``stratabench services`` name of the server this backend needs, if any."""
    default_url: ClassVar[str | None] = None

    def __init__(self, namespace: str, *, url: str | None = None, directory: Path | None = None) -> None:
        if not _NAMESPACE.match(namespace):
            raise UsageError(f"treestore namespace {namespace!r} is not valid; use 1-40 of a-z, 0-9 and _")
        self.namespace = namespace
        self.url = url
        self.directory = directory
        self._open()

    # -- errors ------------------------------------------------------------

    @property
    def address(self) -> str:
        return redact(self.url) if self.url else str(self.directory)

    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        return (OSError,)

    def failure(self, what: str, exc: BaseException | str) -> StoreError:
        text = exc if isinstance(exc, str) else (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        reason = scrub(text, self.url).rstrip(".") if self.url else text
        todo = "check that the server is still running" if self.service else "check the directory and its permissions"
        return StoreError(f"{self.name} at {self.address}: {what} failed: {reason}; {todo}")

    @contextmanager
    def guard(self, what: str) -> Iterator[None]:
        """Turn the driver's exceptions inside the block into one-line :class:`StoreError`."""
        try:
            yield
        except StratabenchError:
            raise
        except self._driver_errors() as exc:
            raise self.failure(what, exc) from exc

    # -- the interface of docs/studies/treestore.md §5 -------------------------------------------

    def _open(self) -> None:
        """Connect the backend's own admin client; raise :meth:`failure` errors here."""

    @abstractmethod
    def install(self, module: SchemaNode, ds: str, access: Access) -> None: ...

    @abstractmethod
    def uninstall(self, module: SchemaNode, ds: str) -> None: ...

    def connect(self) -> Any:
        """Client state of one core connection, established eagerly."""
        return None

    def disconnect(self, conn: Any) -> None:
        """Release what :meth:`connect` opened."""

    @abstractmethod
    def load(self, conn: Any, module: SchemaNode, ds: str, owner: Owner | None,
             scopes: list[Scope] | None) -> Inner | None: ...

    @abstractmethod
    def store_prepare(self, conn: Any, module: SchemaNode, ds: str, owner: Owner | None,
                      diff: Diff | None, tree: Inner | None, origin: str | None) -> None: ...

    @abstractmethod
    def store_commit(self, conn: Any, module: SchemaNode, ds: str, owner: Owner | None,
                     diff: Diff | None, tree: Inner | None, origin: str | None) -> None: ...

    @abstractmethod
    def access(self, conn: Any, module: SchemaNode, ds: str) -> tuple[bool, bool]: ...

    @abstractmethod
    def last_modified(self, conn: Any, module: SchemaNode, ds: str) -> int | None: ...

    def data_version(self, conn: Any, module: SchemaNode, ds: str) -> int | None:
        """A version of data changed outside the core; ``None``: the core's counter is enough."""
        return None

    def owners(self, conn: Any, module: SchemaNode) -> list[Owner]:
        """Every owner with push data stored for ``module``."""
        return []

    @abstractmethod
    def cleanup(self) -> None:
        """Remove this run's namespace, and nothing else; close the admin client."""

    def header(self) -> dict[str, Any]:
        """What the result header records about this backend."""
        return {"backend": self.name, "atomic_commit": self.atomic}
