"""Private servers for the length of one run: ``run --services local``.

:func:`local_services` starts the servers, records them in the state file
(so that the run's worker processes find their process ids when they open
the stores), yields them, and stops them when the block ends, whether it
ends normally, by an error or by Ctrl-C.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from stratabench.errors import StratabenchError
from stratabench.services import state
from stratabench.services.base import RunningService
from stratabench.services.lifecycle import start_services

__all__ = ["LocalServices", "local_services"]


class LocalServices(dict[str, RunningService]):
    """Name → running server, plus :attr:`failures`: name → why it is not running."""

    def __init__(self) -> None:
        super().__init__()
        self.failures: dict[str, StratabenchError] = {}


@contextmanager
def local_services(names: Sequence[str] = (), *, timeout: float | None = None) -> Iterator[LocalServices]:
    """Start private servers, yield them, and stop them at the end.

    Parameters
    ----------
    names
        Services to start; empty starts every registered service and skips,
        with the reason in :attr:`LocalServices.failures`, those that cannot
        start here, so that the run's other cells still run.
    timeout
        Seconds each server may take to answer.

    Raises
    ------
    UnavailableError, ServiceError
        Only for a service named in ``names`` that cannot start; the
        others are stopped first.
    """
    running = LocalServices()
    started, failures = start_services(names, owner_pid=os.getpid(), timeout=timeout)
    running.update(started)
    running.failures.update(failures)
    try:
        if names and failures:
            raise next(iter(failures.values()))
        for service in started.values():
            state.record(service)
        yield running
    finally:
        for service in started.values():
            service.stop()
        if started:
            try:
                state.remove(list(started.values()))
            except StratabenchError:
                pass  # the servers are stopped; a stale entry is skipped as not alive
