"""memcached as a private server, with its default 1 MB item limit and a password.

Needs the ``memcached`` binary (Debian package ``memcached``). The instance
listens on 127.0.0.1 (TCP only, UDP off), with 64 MB of memory and the
default item size limit of 1 MB, which the cache study reports against
(a server of your own started with ``-I`` has a larger one).

It takes a password: memcached 1.5.15+ has ASCII-protocol authentication
(``-Y authfile``): a connection must first send a ``set`` whose data is
``user password``, and every other command is refused until it does.
Debian's build has SASL too, but only for the binary protocol, which
pymemcache does not speak. The auth file holds a fresh random password
(``sb:PASSWORD``), is 0600 in the server's 0700 directory, and the password
is on no command line. Its URL is ``memcached://sb:PASSWORD@127.0.0.1:PORT``.
"""

from __future__ import annotations

from stratabench.services import SERVICES
from stratabench.services.base import Service
from stratabench.services.ports import LOOPBACK, ask

__all__ = ["AUTH_USER", "MemcachedService", "auth_command"]

AUTH_USER = "sb"
_AUTH_FILE = "auth"


def auth_command(user: str, password: str) -> bytes:
    """The ASCII-protocol authentication: a ``set`` of any key with ``user password`` as its data.

    The server answers ``STORED`` when the pair is in its auth file, and
    ``CLIENT_ERROR authentication failure`` otherwise.
    """
    data = f"{user} {password}".encode()
    return b"set auth 0 0 %d\r\n%s\r\n" % (len(data), data)


@SERVICES.register("memcached")
class MemcachedService(Service):
    """memcached with its default limits and a password on a free loopback port."""

    package = "memcached"
    version_args = ("-V",)

    def executable(self) -> str:
        return self.find_binary(["memcached"])

    def prepare(self) -> None:
        self.write_private(_AUTH_FILE, f"{AUTH_USER}:{self.password}\n")

    def command(self) -> list[str]:
        command = [
            self.executable(),
            "-l", LOOPBACK,
            "-p", str(self.port),
            "-U", "0",
            "-m", "64",
            "-t", "2",
            "-Y", str(self.workdir / _AUTH_FILE),
        ]  # fmt: skip
        return command

    def url(self) -> str:
        return f"memcached://{AUTH_USER}:{self.password}@{LOOPBACK}:{self.port}"

    def ready(self) -> bool:
        answer = ask(self.port, auth_command(AUTH_USER, self.password) + b"version\r\n", 2)
        return answer is not None and answer.startswith(b"STORED\r\nVERSION")
