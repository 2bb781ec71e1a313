"""PostgreSQL as a private server: ``initdb`` then ``postgres`` on a loopback port.

Needs PostgreSQL's server binaries (Debian package ``postgresql``): ``initdb``
and ``postgres`` from one directory, found next to a ``postgres`` on PATH or
under ``/usr/lib/postgresql/*/bin`` (newest first). PostgreSQL refuses to
run as root, so as root both run as ``nobody``, which owns the temporary
directory.

The cluster has one superuser, ``stratabench``, with a fresh random
password (SCRAM), and listens on 127.0.0.1 and on a Unix socket in the
temporary directory. Durability settings are PostgreSQL's defaults. Its URL
is ``postgresql://stratabench:PASSWORD@127.0.0.1:PORT/postgres``. It stops
with SIGINT, PostgreSQL's fast shutdown (SIGTERM would wait for clients).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import signal

from stratabench.errors import UnavailableError
from stratabench.services import SERVICES
from stratabench.services.base import Service
from stratabench.services.ports import LOOPBACK

__all__ = ["PostgresqlService"]

USER = "stratabench"


def _version_key(directory: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", directory))


def _binary_dirs() -> list[str]:
    dirs = []
    on_path = shutil.which("postgres")
    if on_path:
        dirs.append(os.path.dirname(os.path.realpath(on_path)))
    dirs += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version_key, reverse=True)
    dirs += sorted(glob.glob("/usr/pgsql-*/bin"), key=_version_key, reverse=True)
    return dirs


@SERVICES.register("postgresql")
class PostgresqlService(Service):
    """PostgreSQL with a password-protected superuser on a free loopback port."""

    package = "postgresql"
    stop_signal = int(signal.SIGINT)

    def _bin_dir(self) -> str:
        for directory in _binary_dirs():
            if all(os.access(os.path.join(directory, name), os.X_OK) for name in ("initdb", "postgres")):
                return directory
        raise UnavailableError(
            "postgresql: no initdb and postgres found on PATH or under /usr/lib/postgresql/*/bin; "
            "apt-get install postgresql (or scripts/install-servers.sh)"
        )

    def executable(self) -> str:
        return os.path.join(self._bin_dir(), "postgres")

    @property
    def data_dir(self) -> str:
        return str(self.workdir / "data")

    def prepare(self) -> None:
        password_file = self.write_private("password", self.password + "\n")
        self.run_setup([
            os.path.join(self._bin_dir(), "initdb"),
            "--pgdata", self.data_dir,
            "--username", USER,
            f"--pwfile={password_file}",
            "--auth=scram-sha-256",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
            "--no-instructions",
        ])  # fmt: skip
        password_file.unlink()

    def command(self) -> list[str]:
        return [
            self.executable(),
            "-D", self.data_dir,
            "-p", str(self.port),
            "-c", f"listen_addresses={LOOPBACK}",
            "-c", f"unix_socket_directories={self.workdir}",
            "-c", "logging_collector=off",
            "-c", "max_connections=50",
            # Shared memory segments as files in its data directory, not in /dev/shm: a server
            # killed with SIGKILL cannot remove its POSIX segments, and each one holds RAM until reboot.
            "-c", "dynamic_shared_memory_type=mmap",
        ]  # fmt: skip

    def url(self) -> str:
        return f"postgresql://{USER}:{self.password}@{LOOPBACK}:{self.port}/postgres"

    def ready(self) -> bool:
        # postmaster.pid's eighth line becomes "ready" once connections are
        # accepted (PostgreSQL 10+): no driver needed to know.
        try:
            lines = (self.workdir / "data" / "postmaster.pid").read_text().splitlines()
        except OSError:
            return False
        return len(lines) >= 8 and lines[7].strip() == "ready"
