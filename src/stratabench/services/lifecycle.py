"""Start, list and stop private servers: the work behind ``stratabench services``.

:func:`start_services` starts several servers at once (in threads: they
spend their time waiting on ``initdb`` and sockets, not on CPU);
:func:`up`, :func:`status` and :func:`down` add the state file, so that
servers started by one command are found and stopped by a later one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Literal

from stratabench.errors import ServiceError, StratabenchError, UnavailableError
from stratabench.services import SERVICES, state
from stratabench.services.base import RunningService

__all__ = ["ServiceStatus", "down", "start_services", "status", "up"]

State = Literal["up", "down", "unavailable", "failed", "stopped"]


@dataclass(frozen=True)
class ServiceStatus:
    """One line of ``stratabench services``: a service, its state and why.

    Attributes
    ----------
    name
        The service name.
    state
        ``up`` (running), ``down`` (not running), ``unavailable`` (its binary
        is missing), ``failed`` (it did not start), ``stopped`` (just stopped).
    service
        The running (or just stopped) server, if any.
    reason
        For ``unavailable`` and ``failed``: one line saying why.
    """

    name: str
    state: State
    service: RunningService | None = None
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        """No password: the URL is redacted."""
        data: dict[str, Any] = {"name": self.name, "state": self.state, "reason": self.reason}
        if self.service is not None:
            data.update(self.service.describe())
        return data


def _names(names: Sequence[str]) -> list[str]:
    for name in names:
        SERVICES.info(name)  # UnknownNameError listing the services
    return list(dict.fromkeys(names)) if names else SERVICES.names


def start_services(
    names: Sequence[str] = (), *, owner_pid: int | None = None, timeout: float | None = None, detached: bool = False
) -> tuple[dict[str, RunningService], dict[str, StratabenchError]]:
    """Start the servers ``names`` (every service if empty) in parallel.

    They end with this process unless ``detached`` (see :meth:`Service.start`).

    Returns
    -------
    (started, failures)
        The servers that answered, and for the others the error
        (:class:`UnavailableError` when the binary is missing,
        :class:`ServiceError` when it did not start). On an interrupt,
        whatever started is stopped before the interrupt goes on.
    """
    wanted = _names(names)
    started: dict[str, RunningService] = {}
    failures: dict[str, StratabenchError] = {}
    pool = ThreadPoolExecutor(max_workers=max(1, len(wanted)), thread_name_prefix="stratabench-service")
    futures: dict[Future[RunningService], str] = {}
    try:
        for name in wanted:
            futures[pool.submit(SERVICES.get(name)().start, timeout=timeout, owner_pid=owner_pid, detached=detached)] = name
        wait(futures)
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        for future in futures:
            if future.done() and not future.cancelled() and future.exception() is None:
                future.result().stop()
        raise
    pool.shutdown()
    for future, name in futures.items():
        error = future.exception()
        if error is None:
            started[name] = future.result()
        elif isinstance(error, (UnavailableError, ServiceError)):
            failures[name] = error
        else:
            for service in started.values():
                service.stop()
            for other, other_name in futures.items():
                if other_name not in started and other.exception() is None:
                    other.result().stop()
            raise error
    return started, failures


def _recorded(names: Sequence[str]) -> dict[str, list[RunningService]]:
    by_name: dict[str, list[RunningService]] = {}
    for service in state.load():
        if not names or service.name in names:
            by_name.setdefault(service.name, []).append(service)
    return by_name


def _owner_alive(service: RunningService) -> bool:
    if service.owner_pid is None:
        return False
    try:
        os.kill(service.owner_pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def up(names: Sequence[str] = (), *, timeout: float | None = None) -> list[ServiceStatus]:
    """Start the servers ``names`` (all if empty) unless ``services up`` already did.

    A server already recorded and running is reported ``up`` again, not
    started twice. Started servers are recorded in the state file.
    """
    wanted = _names(names)
    recorded = _recorded(wanted)
    result: dict[str, ServiceStatus] = {}
    to_start = []
    for name in wanted:
        running = [s for s in recorded.get(name, []) if s.owner_pid is None and s.alive()]
        if running:
            result[name] = ServiceStatus(name, "up", running[0])
        else:
            to_start.append(name)
    if to_start:
        started, failures = start_services(to_start, timeout=timeout, detached=True)
        for name, service in started.items():
            state.record(service)
            result[name] = ServiceStatus(name, "up", service)
        for name, error in failures.items():
            kind: State = "unavailable" if isinstance(error, UnavailableError) else "failed"
            result[name] = ServiceStatus(name, kind, reason=error.message)
    return [result[name] for name in wanted]


def status(names: Sequence[str] = ()) -> list[ServiceStatus]:
    """The state of each service ``names`` (all if empty): up, down or unavailable."""
    wanted = _names(names)
    recorded = _recorded(wanted)
    lines: list[ServiceStatus] = []
    for name in wanted:
        running = [s for s in recorded.get(name, []) if s.alive()]
        if running:
            lines.extend(ServiceStatus(name, "up", service) for service in running)
            continue
        availability = SERVICES.get(name)().availability()
        if availability.ok:
            lines.append(ServiceStatus(name, "down"))
        else:
            lines.append(ServiceStatus(name, "unavailable", reason=availability.reason))
    return lines


def down(names: Sequence[str] = (), *, timeout: float = 15.0) -> list[ServiceStatus]:
    """Stop the servers of ``services up`` (and of runs that died) among ``names`` (all if empty).

    Servers owned by a run still in progress are left to it. Each is
    stopped by its own process ids, only while they still run its binary;
    its temporary directory is removed.
    """
    wanted = _names(names)
    recorded = _recorded(wanted)
    lines: list[ServiceStatus] = []
    gone: list[RunningService] = []
    for name in wanted:
        mine = [s for s in recorded.get(name, []) if not _owner_alive(s)]
        if not mine:
            lines.append(ServiceStatus(name, "down"))
            continue
        for service in mine:
            service.stop(timeout=timeout)
            gone.append(service)
            lines.append(ServiceStatus(name, "stopped", service))
    if gone:
        state.remove(gone)
    return lines
