"""MariaDB as a private server: ``mariadb-install-db`` then ``mariadbd`` on loopback.

Needs MariaDB's server (Debian package ``mariadb-server``):
``mariadb-install-db`` (or ``mysql_install_db``) and ``mariadbd`` (or
``mysqld``). As root both run as ``nobody``, which owns the temporary
directory.

The server listens on 127.0.0.1 only, with its socket, data and log in the
temporary directory, and reads no option file (``--no-defaults``). Grant
tables are on: an init file run at every start creates the user
``stratabench`` with a fresh random password and the database
``stratabench``, so password handling is exercised for real. The root
account authenticates by Unix socket only (the installer's ``socket``
method) and is not used. Its URL is
``mysql://stratabench:PASSWORD@127.0.0.1:PORT/stratabench``.
"""

from __future__ import annotations

import socket

from stratabench.services import SERVICES
from stratabench.services.base import Service
from stratabench.services.ports import LOOPBACK

__all__ = ["MariadbService"]

USER = "stratabench"
DATABASE = "stratabench"


@SERVICES.register("mariadb")
class MariadbService(Service):
    """MariaDB with a password-protected user on a free loopback port."""

    package = "mariadb-server"

    def executable(self) -> str:
        return self.find_binary(["mariadbd", "mysqld"])

    def _installer(self) -> str:
        return self.find_binary(["mariadb-install-db", "mysql_install_db"])

    def prepare(self) -> None:
        # A temporary directory of its own: at start MariaDB deletes the
        # temporary tables it finds in its tmpdir, which in a shared /tmp
        # are those of other instances starting at the same time.
        (self.workdir / "tmp").mkdir(mode=0o700)
        self.give(self.workdir / "tmp")
        self.run_setup([
            self._installer(),
            "--no-defaults",
            f"--datadir={self.workdir / 'data'}",
            f"--tmpdir={self.workdir / 'tmp'}",
            "--auth-root-authentication-method=socket",
            "--skip-test-db",
            "--skip-name-resolve",
        ])  # fmt: skip
        # Every grant is limited to 127.0.0.1, the only address the server binds.
        self.write_private(
            "init.sql",
            f"CREATE DATABASE IF NOT EXISTS `{DATABASE}`;\n"
            f"CREATE USER IF NOT EXISTS '{USER}'@'{LOOPBACK}' IDENTIFIED BY '{self.password}';\n"
            f"GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'{LOOPBACK}';\n",
        )

    def command(self) -> list[str]:
        return [
            self.executable(),
            "--no-defaults",
            f"--datadir={self.workdir / 'data'}",
            f"--socket={self.workdir / 'mysqld.sock'}",
            f"--pid-file={self.workdir / 'mysqld.pid'}",
            f"--tmpdir={self.workdir / 'tmp'}",
            f"--port={self.port}",
            f"--bind-address={LOOPBACK}",
            "--skip-name-resolve",
            f"--init-file={self.workdir / 'init.sql'}",
            "--innodb-buffer-pool-size=128M",
        ]

    def url(self) -> str:
        return f"mysql://{USER}:{self.password}@{LOOPBACK}:{self.port}/{DATABASE}"

    def ready(self) -> bool:
        # The init file has run once the server logs that it is ready; the
        # TCP greeting then proves the port is the server's.
        try:
            log = self.log_path.read_bytes()
        except OSError:
            return False
        if b"ready for connections" not in log:
            return False
        with socket.create_connection((LOOPBACK, self.port), timeout=1.0) as sock:
            return len(sock.recv(64)) > 4
