"""Free TCP ports on the loopback interface."""

from __future__ import annotations

import socket

__all__ = ["LOOPBACK", "ask", "free_port", "port_answers"]

LOOPBACK = "127.0.0.1"
"""Every private server binds here and nowhere else."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now.

    The kernel picks it (bind to port 0), so it comes from the ephemeral
    range and is unlikely to be taken again before the server binds it;
    a server that loses that race fails to start and is retried.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


def port_answers(port: int, *, host: str = LOOPBACK, timeout: float = 0.5) -> bool:
    """Whether something accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def ask(port: int, request: bytes, lines: int, *, timeout: float = 1.0) -> bytes | None:
    """Send ``request`` to a loopback server and read ``lines`` CRLF-ended reply lines; ``None`` if it hangs up first."""
    with socket.create_connection((LOOPBACK, port), timeout=timeout) as sock:
        sock.sendall(request)
        reply = b""
        while reply.count(b"\r\n") < lines:
            chunk = sock.recv(128)
            if not chunk:
                return None
            reply += chunk
        return reply
