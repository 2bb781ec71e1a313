"""Redis as a private server: ``redis-server`` on a loopback port, no persistence.

Needs the ``redis-server`` binary (Debian package ``redis-server``). The
instance keeps everything in memory (no RDB snapshots, no AOF), listens on
127.0.0.1 only, with protected mode on and a fresh random password
(``requirepass``, in a 0600 configuration file rather than on the command
line, where ``ps`` would show it), and logs to its temporary directory. Its
URL is ``redis://:PASSWORD@127.0.0.1:PORT/0``; only its redacted form is
ever shown.
"""

from __future__ import annotations

from stratabench.services import SERVICES
from stratabench.services.base import Service
from stratabench.services.ports import LOOPBACK, ask

__all__ = ["RedisService"]


@SERVICES.register("redis")
class RedisService(Service):
    """Redis in memory on a free loopback port."""

    package = "redis-server"

    def executable(self) -> str:
        return self.find_binary(["redis-server"])

    def prepare(self) -> None:
        self.write_private("redis.conf", f"requirepass {self.password}\n")

    def command(self) -> list[str]:
        return [
            self.executable(),
            str(self.workdir / "redis.conf"),
            "--port", str(self.port),
            "--bind", LOOPBACK,
            "--protected-mode", "yes",
            "--dir", str(self.workdir),
            "--save", "",
            "--appendonly", "no",
            "--daemonize", "no",
            "--logfile", "",
        ]  # fmt: skip

    def url(self) -> str:
        return f"redis://:{self.password}@{LOOPBACK}:{self.port}/0"

    def ready(self) -> bool:
        return ask(self.port, f"AUTH {self.password}\r\nPING\r\n".encode(), 2) == b"+OK\r\n+PONG\r\n"
