"""Start and stop any of the four parking servers the same way: a process on 127.0.0.1.

Every server, Python or Go, keeps one contract: it prints ``listening
127.0.0.1:PORT`` on stdout when it accepts calls and exits when its
standard input closes. The Python servers also answer ``statements`` on
stdin with their SQL counts (:mod:`stratabench.systems.parking.serve`); a server that does not answer
within a moment simply has no counts of its own.

The Go program ``stratabench-parking`` takes ``-impl orm|sql -db
sqlite|postgresql|mysql -dsn DSN -listen 127.0.0.1:0 -log FILE``; its DSN is
the driver's own form (``user:pass@tcp(host:port)/db`` for MySQL, the URL
for PostgreSQL, the file path for SQLite), derived here from the same
database URL the Python servers take.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import unquote, urlsplit

from stratabench.errors import ServiceError, UnavailableError
from stratabench.redact import redact
from stratabench.systems.parking.schema import dialect_of

__all__ = ["GO_PROGRAM", "IMPLEMENTATIONS", "ServerProcess", "go_binary", "go_dsn", "server_command"]

#: The four servers of the study, in report order.
IMPLEMENTATIONS = ("python-orm", "python-core", "go-orm", "go-sql")
GO_PROGRAM = "stratabench-parking"
_GO_IMPL = {"go-orm": "orm", "go-sql": "sql"}
_START_TIMEOUT_S = 60.0


def go_binary() -> Path:
    """Where ``stratabench-parking`` is built (``.build/go/``, or ``STRATABENCH_GO_BIN_DIR``)."""
    from stratabench.adapters import golang

    return golang.binary_path(GO_PROGRAM)


def go_dsn(url: str) -> str:
    """The Go driver's DSN for a database URL (see the module docstring)."""
    dialect = dialect_of(url)
    parts = urlsplit(url)
    if dialect == "sqlite":
        return url.split("://", 1)[1][1:] if url.startswith("sqlite:///") else url.split("://", 1)[1]
    if dialect == "mysql":
        user = unquote(parts.username or "")
        password = f":{unquote(parts.password)}" if parts.password else ""
        database = parts.path.lstrip("/")
        return f"{user}{password}@tcp({parts.hostname}:{parts.port or 3306})/{database}?parseTime=true"
    return f"postgres://{url.split('://', 1)[1]}"


def server_command(impl: str, db_url: str, *, log_file: str = "") -> list[str]:
    """The command line that starts ``impl`` on ``db_url`` on a free loopback port."""
    if impl in _GO_IMPL:
        binary = go_binary()
        if not binary.exists():
            raise UnavailableError(f"{impl}: {binary} is not built; run scripts/install {GO_PROGRAM}")
        return [str(binary), "-impl", _GO_IMPL[impl], "-db", dialect_of(db_url), "-dsn", go_dsn(db_url),
                "-listen", "127.0.0.1:0", "-log", log_file]  # fmt: skip
    return [sys.executable, "-m", "stratabench.systems.parking.serve", "--impl", impl, "--db", db_url,
            "--port", "0", "--log", log_file]  # fmt: skip


@dataclass
class ServerProcess:
    """One running parking server; use as a context manager so it always stops."""

    impl: str
    db_url: str
    log_file: str = ""

    def __post_init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: IO[str] | None = None
        self.base_url = ""

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    def start(self) -> ServerProcess:
        command = server_command(self.impl, self.db_url, log_file=self.log_file)
        # stderr goes to a file: a chatty server can never block on a full pipe.
        self._stderr = tempfile.TemporaryFile(mode="w+")
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self._stderr, text=True, bufsize=1)  # fmt: skip
        threading.Thread(target=self._pump, args=(self._process.stdout,), daemon=True).start()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            line = self._next_line(deadline - time.monotonic())
            if line is None:
                break
            if line.startswith("listening "):
                self.base_url = f"http://{line.split(None, 1)[1].strip()}/"
                return self
        process = self._process
        try:
            process.wait(timeout=2)
            reason = self._stderr_tail()
        except subprocess.TimeoutExpired:
            reason = "no answer in time"
        self.stop()
        raise ServiceError(f"parking server {self.impl} on {redact(self.db_url)} did not start: {reason}")

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line)
        self._lines.put(None)

    def _next_line(self, timeout: float) -> str | None:
        try:
            return self._lines.get(timeout=max(timeout, 0.01))
        except queue.Empty:
            return None

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return "no answer in time"
        self._stderr.seek(0)
        lines = self._stderr.read().strip().splitlines()
        return " | ".join(lines[-3:]) or "no answer in time"

    def statements(self, timeout: float = 5.0) -> dict[str, int] | None:
        """The server's own SQL counts so far, or None when it keeps none."""
        if self._process is None or self._process.stdin is None or self._process.poll() is not None:
            return None
        self._process.stdin.write("statements\n")
        self._process.stdin.flush()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self._next_line(deadline - time.monotonic())
            if line is None:
                return None
            if line.startswith("statements "):
                counts: dict[str, int] = json.loads(line.split(None, 1)[1])
                return counts
        return None

    def stop(self) -> None:
        """Close stdin (the servers' stop signal), then terminate if it lingers."""
        process, self._process = self._process, None
        if process is None:
            return
        tail_source, self._stderr = self._stderr, None
        try:
            if process.stdin:
                process.stdin.close()
            process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout:
            process.stdout.close()
        if tail_source:
            tail_source.close()

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()
