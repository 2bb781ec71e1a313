"""Redis as a private server: ``redis-server`` on a loopback port, no persistence.

Needs the ``redis-server`` binary (Debian package ``redis-server``). The
instance keeps everything in memory (no RDB snapshots, no AOF), listens on
127.0.0.1 only, with protected mode on and no password, and logs to its
temporary directory. Its URL is ``redis://127.0.0.1:PORT/0``.
"""

from __future__ import annotations

import socket

from stratabench.services import SERVICES
from stratabench.services.base import Service
from stratabench.services.ports import LOOPBACK

__all__ = ["RedisService"]


@SERVICES.register("redis")
class RedisService(Service):
    """Redis in memory on a free loopback port."""

    package = "redis-server"

    def executable(self) -> str:
        return self.find_binary(["redis-server"])

    def command(self) -> list[str]:
        return [
            self.executable(),
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
        return f"redis://{LOOPBACK}:{self.port}/0"

    def ready(self) -> bool:
        with socket.create_connection((LOOPBACK, self.port), timeout=1.0) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
