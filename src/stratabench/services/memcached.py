"""memcached as a private server, with its default 1 MB item limit.

Needs the ``memcached`` binary (Debian package ``memcached``). The instance
listens on 127.0.0.1 (TCP only, UDP off), with 64 MB of memory and the
default item size limit of 1 MB, which the cache study reports against
(a server of your own started with ``-I`` has a larger one). memcached has
no password. Its URL is ``memcached://127.0.0.1:PORT``.
"""

from __future__ import annotations

import socket

from stratabench.services import SERVICES
from stratabench.services.base import Service
from stratabench.services.ports import LOOPBACK

__all__ = ["MemcachedService"]


@SERVICES.register("memcached")
class MemcachedService(Service):
    """memcached with its default limits on a free loopback port."""

    package = "memcached"
    version_args = ("-V",)

    def executable(self) -> str:
        return self.find_binary(["memcached"])

    def command(self) -> list[str]:
        command = [
            self.executable(),
            "-l", LOOPBACK,
            "-p", str(self.port),
            "-U", "0",
            "-m", "64",
            "-t", "2",
        ]  # fmt: skip
        return command

    def url(self) -> str:
        return f"memcached://{LOOPBACK}:{self.port}"

    def ready(self) -> bool:
        with socket.create_connection((LOOPBACK, self.port), timeout=1.0) as sock:
            sock.sendall(b"version\r\n")
            return sock.recv(64).startswith(b"VERSION")
