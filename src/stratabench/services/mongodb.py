"""A MongoDB-compatible private server: the project's Go ``stratabench-mongo`` on a private PostgreSQL.

Needs ``.build/go/stratabench-mongo`` (or ``$STRATABENCH_GO_BIN_DIR``), built
from ``go/cmd/stratabench-mongo`` on embeddable FerretDB; when it is
missing and the Go toolchain is here, starting the service builds it. It
speaks MongoDB's wire protocol on 127.0.0.1 and prints
``ready mongodb://...`` once it accepts connections. It is not a real
MongoDB: the timings are FerretDB's.

FerretDB keeps the data in a private PostgreSQL (the ``postgresql``
service's server, started first with the same owner and stopped after it:
:attr:`RunningService.under`), not in its SQLite backend: on SQLite,
FerretDB 1.24 hands the database only filters that are exactly
``{_id: value}`` and reads and decodes the whole collection for any other,
which made the treestore study's successor lookups and deletes quadratic
(a cell timed out at N = 1,000). On PostgreSQL it pushes equality on any
top-level field down. So this service needs PostgreSQL's server binaries
as the ``postgresql`` service does. The PostgreSQL URL, password
included, reaches FerretDB in a 0600 file, never on its command line.

Its password is the private PostgreSQL's. FerretDB 1.24's embeddable
package has no setting for authentication of its own (its SCRAM accounts,
``--test-enable-new-auth``, are reachable only through internal packages,
which another Go module cannot import), but on PostgreSQL it hands the user
name and password a client authenticated with (``authMechanism=PLAIN``) to
PostgreSQL, which checks them (SCRAM), and serves a client that gave none
with the account of the URL it was started with. The Go program starts it
with that URL's password left out, so PostgreSQL refuses such a client: the
server answers ``hello`` to anyone, as MongoDB does, and anything else only
to a client that knows the password. The URL is
``mongodb://USER:PASSWORD@127.0.0.1:PORT/?authMechanism=PLAIN``; PLAIN sends
the password in the clear, over loopback only.

Under root it runs as ``nobody``, as the other servers do: its binary
lives in the work tree, which that account may not be able to read, so a
copy in its private directory is what runs.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from urllib.parse import quote, unquote, urlsplit

from stratabench.errors import StratabenchError, UnavailableError
from stratabench.registry import Availability
from stratabench.services import SERVICES
from stratabench.services.base import RunningService, Service
from stratabench.services.ports import LOOPBACK

__all__ = ["MongodbService"]

PROGRAM = "stratabench-mongo"
BACKING = "postgresql"


@SERVICES.register("mongodb")
class MongodbService(Service):
    """The project's MongoDB-compatible server (FerretDB on a private PostgreSQL) on a free loopback port."""

    version_args = None

    def __init__(self) -> None:
        super().__init__()
        self.backing_url = ""

    def _backing(self) -> Service:
        return SERVICES.get(BACKING)()

    def availability(self) -> Availability:
        backing = self._backing().availability()
        if not backing.ok:
            return Availability(False, f"mongodb: needs PostgreSQL under FerretDB: {backing.reason}")
        return super().availability()

    def start(
        self, *, timeout: float | None = None, owner_pid: int | None = None, detached: bool = False
    ) -> RunningService:
        """Start the private PostgreSQL, then FerretDB on it; a failure of either stops both.

        The PostgreSQL is detached exactly when FerretDB is: a ``services up``
        FerretDB must not lose its data store when the command that started
        them ends, nor may a run's PostgreSQL outlive the run.
        """
        self.install()
        self.executable()  # a missing binary says so before a PostgreSQL is started for nothing
        try:
            backing = self._backing().start(timeout=timeout, owner_pid=owner_pid, detached=detached)
        except UnavailableError as exc:
            raise UnavailableError(f"mongodb: needs PostgreSQL under FerretDB: {exc.message}") from None
        self.backing_url = backing.url
        try:
            running = super().start(timeout=timeout, owner_pid=owner_pid, detached=detached)
        except BaseException:
            backing.stop()
            raise
        return dataclasses.replace(running, under=(backing,))

    def prepare(self) -> None:
        self.write_private("postgresql-url", self.backing_url + "\n")
        # The server's account runs its own copy: the work tree may be closed to it.
        copy = self.workdir / PROGRAM
        shutil.copyfile(self.executable(), copy)
        copy.chmod(0o500)
        self.give(copy)

    def install(self) -> None:
        from stratabench.adapters import golang

        if not (golang.GO_DIR / "cmd" / PROGRAM).is_dir():
            return  # no sources to build from: the binary, if any, is used as it is
        try:
            # Built anew when its sources changed since (a binary from older sources refused the
            # flags the service now passes): a rebuild of unchanged code is skipped.
            golang.ensure_built((PROGRAM,))
        except StratabenchError as exc:
            # A failed build, like a missing toolchain, leaves the service unavailable here.
            raise UnavailableError(f"mongodb: cannot build {PROGRAM}: {exc.message}") from None

    def executable(self) -> str:
        from stratabench.adapters import golang

        path = golang.binary_path(PROGRAM)
        if not os.access(path, os.X_OK):
            raise UnavailableError(
                f"mongodb: {path} is not built; build it with "
                f"`python -c 'from stratabench.adapters import golang; golang.build((\"{PROGRAM}\",))'` (needs Go)"
            )
        return str(path)

    def running_executable(self, executable: str) -> str:
        return str(self.workdir / PROGRAM)

    def command(self) -> list[str]:
        return [self.running_executable(self.executable()), "--listen", f"{LOOPBACK}:{self.port}",
                "--postgresql-url-file", str(self.workdir / "postgresql-url")]

    def url(self) -> str:
        backing = urlsplit(self.backing_url)
        credentials = f"{quote(unquote(backing.username or ''), safe='')}:{quote(unquote(backing.password or ''), safe='')}"
        return f"mongodb://{credentials}@{LOOPBACK}:{self.port}/?authMechanism=PLAIN"

    def ready(self) -> bool:
        try:
            return b"ready mongodb://" in self.log_path.read_bytes()
        except OSError:
            return False
