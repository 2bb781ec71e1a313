"""The service contract: start a private server, know it answers, stop it.

A :class:`Service` finds its server binary, makes a temporary directory,
picks a free loopback port, prepares what the server needs there (a data
directory, a password), starts the server in its own session so that a
Ctrl-C in the terminal does not reach it, and waits until it answers. The
result is a :class:`RunningService`: its URL (which may carry a password,
so only :attr:`RunningService.redacted_url` is ever shown), its process ids
and the executable they run.

Stopping goes by those process ids only, and only while each process still
runs the recorded executable and was started at the recorded time, so a
recycled pid is never signalled. Nothing is stopped by name.

A server sees a cleaned environment (:meth:`Service.environment`: ``PATH``,
``HOME`` and ``TMPDIR`` pointing at its directory, ``LANG``), never the
caller's, which may hold secrets. Its directory is 0700. Servers of a run
(``run --services local``) also get a parent-death signal
(:mod:`stratabench.lifeline`), so that a run killed with SIGKILL does not
leave them behind. So does every server started without ``detached=True``:
only the servers of ``services up`` are meant to outlive the process that
started them (and are recorded in the state file, where ``services down``
finds them). A private server started untied by a test or a library
caller, whose caller was then killed, was nobody's to stop: that is how
memcached processes with parent pid 1 were found running long after their
runs.

When running as root, servers that refuse root (PostgreSQL, MariaDB,
memcached) and the others alike run as the unprivileged user ``nobody``:
the temporary directory is handed to that user, and the process is started
with its uid and gid (``subprocess.Popen(user=..., group=...)``).
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from stratabench.errors import ServiceError, UnavailableError
from stratabench.lifeline import parent_death_signal, popen_tied
from stratabench.redact import redact, scrub
from stratabench.registry import Availability
from stratabench.services.ports import LOOPBACK, free_port

__all__ = ["RunningService", "Service", "log_tail", "stop_processes"]

_UNPRIVILEGED_USER = "nobody"
# Popen objects of servers this process started, kept so that they are
# reaped when stopped (and never garbage-collected while running, which
# would warn).
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}
_PORT_RETRIES = 3


@dataclass(frozen=True)
class RunningService:
    """A private server that was started and answered.

    Attributes
    ----------
    name
        The service name (``redis``).
    url
        The store URL to reach it. May carry a password: never show it,
        show :attr:`redacted_url`.
    pids
        Process ids of the server, for stopping and for ``server_cpu_ns``.
    port
        Its loopback TCP port.
    workdir
        Its temporary directory (data, socket, log), removed by :meth:`stop`.
    executable
        The real path of the binary the pids run; :meth:`stop` signals a pid
        only while it still runs this.
    create_times
        Start time of each pid (seconds since the epoch), same purpose.
    stop_signal
        The signal that asks this server to shut down quickly.
    started_s
        How long starting took, until it answered.
    version
        The server's version line, when it tells one.
    owner_pid
        The process that owns it: a ``run --services local`` process, whose
        servers stop with it; ``None`` for servers of ``services up``.
    under
        Private servers this one runs on (the MongoDB-wire server's
        PostgreSQL): started before it, with the same owner, and stopped
        after it by :meth:`stop`.
    """

    name: str
    url: str
    pids: tuple[int, ...]
    port: int
    workdir: str
    executable: str
    create_times: tuple[float, ...]
    stop_signal: int = int(signal.SIGTERM)
    started_s: float = 0.0
    version: str = ""
    owner_pid: int | None = None
    extra: dict[str, str] = field(default_factory=dict)
    under: tuple[RunningService, ...] = ()

    @property
    def redacted_url(self) -> str:
        """The URL with its password masked."""
        return redact(self.url)

    def describe(self) -> dict[str, Any]:
        """What a results header or ``services status --json`` shows: no password."""
        return {
            "name": self.name,
            "url": self.redacted_url,
            "pids": list(self.pids),
            "port": self.port,
            "version": self.version,
            "started_s": round(self.started_s, 3),
        }

    def to_json(self) -> dict[str, Any]:
        """Everything, password included: only for the private state file."""
        data = asdict(self)
        data["pids"] = list(self.pids)
        data["create_times"] = list(self.create_times)
        data["under"] = [service.to_json() for service in self.under]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunningService:
        values = dict(data)
        values["pids"] = tuple(values.get("pids", ()))
        values["create_times"] = tuple(values.get("create_times", ()))
        values["under"] = tuple(cls.from_json(entry) for entry in values.get("under", ()))
        return cls(**values)

    def each(self) -> Iterator[RunningService]:
        """This server, then every server it runs on (:attr:`under`, recursively)."""
        yield self
        for service in self.under:
            yield from service.each()

    def alive(self) -> bool:
        """Whether any of its processes still runs (and is the one recorded)."""
        return bool(_own_processes(self.pids, self.create_times, self.executable))

    def stop(self, *, timeout: float = 15.0) -> None:
        """Stop its processes (signal, then SIGKILL after ``timeout``), then the servers it runs on; remove their directories."""
        stop_processes(self.pids, self.create_times, self.executable, sig=self.stop_signal, timeout=timeout)
        shutil.rmtree(self.workdir, ignore_errors=True)
        for service in self.under:
            service.stop(timeout=timeout)


def _own_processes(pids: Sequence[int], create_times: Sequence[float], executable: str) -> list[Any]:
    import psutil

    found = []
    for pid, created in zip(pids, create_times):
        try:
            process = psutil.Process(pid)
            if abs(process.create_time() - created) > 0.5 or process.status() == psutil.STATUS_ZOMBIE:
                continue
            try:
                exe = os.path.realpath(process.exe())
            except (psutil.AccessDenied, FileNotFoundError):
                exe = executable
            if exe != executable:
                continue
        except psutil.NoSuchProcess:
            continue
        found.append(process)
    return found


def stop_processes(
    pids: Sequence[int],
    create_times: Sequence[float],
    executable: str,
    *,
    sig: int = int(signal.SIGTERM),
    timeout: float = 15.0,
) -> None:
    """Signal each pid that still runs ``executable`` since its recorded time, then SIGKILL.

    A pid whose process has another executable or start time is someone
    else's now and is left alone. Zombies count as stopped: a server whose
    parent exited is reaped by init, or not, which is not ours to fix.
    """
    import psutil

    processes = _own_processes(pids, create_times, executable)
    for process in processes:
        try:
            process.send_signal(sig)
        except psutil.NoSuchProcess:
            pass
    if not _wait_gone(processes, timeout):
        for process in _own_processes(pids, create_times, executable):
            try:
                process.kill()
            except psutil.NoSuchProcess:
                pass
        _wait_gone(processes, 5.0)
    for pid in pids:
        child = _CHILDREN.pop(pid, None)
        if child is not None:
            try:
                child.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                _CHILDREN[pid] = child


def _wait_gone(processes: Sequence[Any], timeout: float) -> bool:
    import psutil

    deadline = time.monotonic() + timeout
    while True:
        for process in processes:
            child = _CHILDREN.get(process.pid)
            if child is not None:
                child.poll()  # reap it if it has exited
        running = []
        for process in processes:
            try:
                if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                    running.append(process)
            except psutil.NoSuchProcess:
                pass
        if not running:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def _private_directories(root: Path) -> None:
    """Make ``root`` and every directory below it 0700: data, sockets and passwords are the server's alone."""
    for directory, _, _ in os.walk(root):
        os.chmod(directory, 0o700)


def log_tail(path: Path, *, lines: int = 3, width: int = 400) -> str:
    """The last non-empty lines of a log, joined into one line."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    kept = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    joined = " | ".join(kept) or "(empty log)"
    return joined if len(joined) <= width else "..." + joined[-width:]


class Service(ABC):
    """One kind of private server.

    Subclasses name the binary (:meth:`executable`), prepare the directory
    (:meth:`prepare`), give the command line (:meth:`command`), the URL
    (:meth:`url`) and a readiness check (:meth:`ready`). :meth:`start`
    does the rest.

    Attributes
    ----------
    workdir
        The temporary directory, set by :meth:`start`.
    port
        The loopback port, set by :meth:`start`.
    password
        A fresh random password, for servers that take one.
    """

    name: ClassVar[str]
    """The registered name (set by the registry)."""

    package: ClassVar[str] = ""
    """The Debian package with the binary, for the install hint."""

    stop_signal: ClassVar[int] = int(signal.SIGTERM)
    """The signal that makes this server shut down quickly."""

    start_timeout_s: ClassVar[float] = 60.0
    """How long the server may take to answer."""

    drop_root: ClassVar[bool] = True
    """Whether to run as ``nobody`` when stratabench runs as root."""

    version_args: ClassVar[tuple[str, ...] | None] = ("--version",)
    """Arguments that make the binary print its version, or ``None``."""

    def __init__(self) -> None:
        self.workdir = Path()
        self.port = 0
        # URL-safe, so it needs no escaping in a URL or a config file.
        self.password = secrets.token_urlsafe(18)

    # -- what subclasses say ------------------------------------------------

    @abstractmethod
    def executable(self) -> str:
        """The server binary's path; :class:`UnavailableError` when it is missing."""

    def running_executable(self, executable: str) -> str:
        """The binary the started process runs: :meth:`executable`, unless :meth:`prepare` runs a copy of it.

        :meth:`RunningService.alive` and ``stop`` recognise the process by it, so it must be what runs.
        """
        return executable

    def install(self) -> None:
        """Build or fetch the binary when that is the project's job (called by :meth:`start`)."""

    def prepare(self) -> None:
        """Make what the server needs in :attr:`workdir` before it starts."""

    def environment(self) -> dict[str, str]:
        """The whole environment of the server and its setup commands.

        Only what a server needs, so that the caller's variables (cloud
        credentials, tokens) never reach a process that logs its
        environment or runs as another user.
        """
        return {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(self.workdir),
            "TMPDIR": str(self.workdir),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
        }

    @abstractmethod
    def command(self) -> list[str]:
        """The server's command line."""

    @abstractmethod
    def url(self) -> str:
        """The store URL of the running server (may carry :attr:`password`)."""

    @abstractmethod
    def ready(self) -> bool:
        """Whether the server answers now (called repeatedly while starting)."""

    # -- shared machinery -----------------------------------------------------

    @property
    def log_path(self) -> Path:
        """Where the server's output goes."""
        return self.workdir / "server.log"

    def availability(self) -> Availability:
        """Whether the binary is here, and if not, what to install."""
        try:
            self.executable()
        except UnavailableError as exc:
            return Availability(False, exc.message)
        return Availability(True)

    def find_binary(self, names: Sequence[str], *, extra_dirs: Sequence[str] = ()) -> str:
        """The first of ``names`` found in ``extra_dirs`` or on PATH (and ``/usr/sbin``).

        Raises
        ------
        UnavailableError
            With the Debian package and the project's install script.
        """
        search = os.pathsep.join([*extra_dirs, os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"])
        for name in names:
            found = shutil.which(name, path=search)
            if found:
                # Not the real path: some servers pick their mode from argv[0]
                # (redis-server is a link to redis-check-rdb).
                return found
        hint = f"apt-get install {self.package} (or scripts/install-servers.sh)" if self.package else "install it"
        raise UnavailableError(f"{self.name}: no {' or '.join(names)} on PATH; {hint}")

    def _user(self) -> pwd.struct_passwd | None:
        """The unprivileged account to run as, or ``None`` to run as ourselves."""
        if os.geteuid() != 0 or not self.drop_root:
            return None
        try:
            return pwd.getpwnam(_UNPRIVILEGED_USER)
        except KeyError:
            raise ServiceError(
                f"{self.name}: running as root and there is no user {_UNPRIVILEGED_USER!r} to start the server as; "
                "create it or run stratabench as an ordinary user"
            ) from None

    def _popen_user(self) -> dict[str, Any]:
        user = self._user()
        if user is None:
            return {}
        return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}

    def give(self, path: Path) -> None:
        """Hand ``path`` to the account the server runs as (a no-op unless root)."""
        user = self._user()
        if user is not None:
            os.chown(path, user.pw_uid, user.pw_gid)

    def write_private(self, name: str, text: str) -> Path:
        """Write a file in :attr:`workdir` readable only by the server's account."""
        path = self.workdir / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(text)
        self.give(path)
        return path

    def run_setup(self, args: Sequence[str], *, timeout: float = 120.0, stdin: str | None = None) -> str:
        """Run a preparation command (``initdb``) as the server's account; its output on failure."""
        try:
            done = subprocess.run(
                list(args),
                cwd=self.workdir,
                input=stdin.encode() if stdin is not None else None,
                stdin=None if stdin is not None else subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
                check=False,
                env=self.environment(),
                preexec_fn=parent_death_signal(),  # noqa: PLW1509 -- setup must not outlive a killed caller
                **self._popen_user(),
            )
        except subprocess.TimeoutExpired:
            raise ServiceError(f"{self.name}: {Path(args[0]).name} took more than {timeout:.0f} s") from None
        except OSError as exc:
            raise ServiceError(f"{self.name}: cannot run {args[0]}: {exc}") from None
        output: str = (done.stdout + done.stderr).decode(errors="replace")
        if done.returncode != 0:
            lines = [line.strip() for line in output.splitlines() if line.strip()]
            # Installers end with boilerplate (where to report bugs); the cause is the error lines.
            errors = [line for line in lines if "error" in line.lower() or "fatal" in line.lower()]
            tail = " | ".join(errors[:4] or lines[-4:])[:400]
            raise ServiceError(
                f"{self.name}: {Path(args[0]).name} failed with exit code {done.returncode}: {scrub(tail, self.url())}"
            )
        return output

    def _version(self, executable: str) -> str:
        if self.version_args is None:
            return ""
        try:
            done = subprocess.run(
                [executable, *self.version_args], capture_output=True, timeout=10, check=False,
                env=self.environment(),
            )
        except (OSError, subprocess.SubprocessError):
            return ""
        text = (done.stdout or done.stderr).decode(errors="replace").strip()
        return text.splitlines()[0] if text else ""

    def start(
        self, *, timeout: float | None = None, owner_pid: int | None = None, detached: bool = False
    ) -> RunningService:
        """Start the server and wait until it answers.

        Parameters
        ----------
        timeout
            Seconds to wait for it to answer; :attr:`start_timeout_s` by default.
        owner_pid
            Recorded in the result: the process whose servers these are.
        detached
            Let the server outlive this process (``services up``); otherwise
            it gets SIGKILL when this process ends, however it ends.

        Raises
        ------
        UnavailableError
            The binary is missing.
        ServiceError
            It did not start or answer in time; the message ends with its log's tail.
        """
        self.install()
        executable = self.executable()
        version = self._version(executable)
        timeout = self.start_timeout_s if timeout is None else timeout
        for attempt in range(_PORT_RETRIES):
            began = time.monotonic()
            self.workdir = Path(tempfile.mkdtemp(prefix=f"stratabench-{self.name}-"))
            self.port = free_port()
            process: subprocess.Popen[bytes] | None = None
            try:
                self.give(self.workdir)
                self.prepare()
                _private_directories(self.workdir)
                process = self._launch(tied=not detached)
                self._wait_ready(process, timeout)
            except ServiceError as exc:
                retry = "in use" in log_tail(self.log_path, lines=20).lower() and attempt + 1 < _PORT_RETRIES
                shutil.rmtree(self.workdir, ignore_errors=True)
                if retry:
                    continue  # another program took the port between our check and the server's bind
                raise exc from None
            except BaseException:
                if process is not None:
                    self._kill(process)
                shutil.rmtree(self.workdir, ignore_errors=True)
                raise
            import psutil

            created = psutil.Process(process.pid).create_time()
            return RunningService(
                name=self.name,
                url=self.url(),
                pids=(process.pid,),
                port=self.port,
                workdir=str(self.workdir),
                executable=os.path.realpath(self.running_executable(executable)),
                create_times=(created,),
                stop_signal=int(self.stop_signal),
                started_s=time.monotonic() - began,
                version=version,
                owner_pid=owner_pid,
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def _launch(self, *, tied: bool) -> subprocess.Popen[bytes]:
        """Start the server; ``tied``: it gets SIGKILL when this process ends."""
        command = self.command()
        log = open(self.log_path, "ab")  # noqa: SIM115 -- the child keeps it; we close our copy below
        try:
            process = (popen_tied if tied else subprocess.Popen)(
                command,
                cwd=self.workdir,
                env=self.environment(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
                **self._popen_user(),
            )
        except OSError as exc:
            raise ServiceError(f"{self.name}: cannot run {command[0]}: {exc}") from None
        finally:
            log.close()
        _CHILDREN[process.pid] = process
        return process

    def _wait_ready(self, process: subprocess.Popen[bytes], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        pause = 0.02
        while True:
            code = process.poll()
            if code is not None:
                _CHILDREN.pop(process.pid, None)
                raise ServiceError(
                    f"{self.name} exited with code {code} while starting on {LOOPBACK}:{self.port}; "
                    f"its log ends: {scrub(log_tail(self.log_path), self.url())}"
                )
            try:
                if self.ready():
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                tail = scrub(log_tail(self.log_path), self.url())
                self._kill(process)
                raise ServiceError(
                    f"{self.name} did not answer within {timeout:.0f} s on {LOOPBACK}:{self.port}; its log ends: {tail}"
                )
            time.sleep(pause)
            pause = min(pause * 1.5, 0.25)

    def _kill(self, process: subprocess.Popen[bytes]) -> None:
        try:
            process.kill()
            process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass
        _CHILDREN.pop(process.pid, None)
