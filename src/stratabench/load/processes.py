"""Clients as processes of this machine: one process per client, never threads.

Threads of one Python process share one interpreter lock, so eight client
threads measure the lock as much as the server. Each client here is a
process of its own, started with ``forkserver`` (``spawn`` where there is
none): the fork server imports the load engine once, so eight clients start
in a fraction of a second, and no client inherits the parent's threads or
open connections as a plain ``fork`` would.

The clients wait for each other at a :class:`multiprocessing.Barrier`
(:class:`BarrierGate`); a client that fails before the start breaks the
barrier, so the others give up at once instead of waiting for it. Reports
come back through a queue. Whatever happens (a finished run, a client that
died, a timeout, Ctrl-C), :meth:`LocalProcesses.run` returns or raises only
after every client process has ended: it is joined, then terminated, then
killed. When stratabench itself is killed with SIGKILL, each client sees its
parent's sentinel close and exits at once.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import threading
import time
from collections.abc import Sequence
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from types import TracebackType
from typing import Any

from stratabench.load.client import ClientReport, ClientSpec, run_client
from stratabench.scratch import claim_multiprocessing

__all__ = ["BarrierGate", "LocalProcesses"]

# Imported once by the fork server, so that every client forked from it starts warm.
_PRELOAD = ["stratabench.load.client", "numpy", "hdrh.histogram"]
_POLL_S = 0.2
_PARENT_GONE = 70  # exit status of a client whose run was killed under it
_END_GRACE_S = 3.0


class BarrierGate:
    """The start gate of local clients: a barrier every client waits at."""

    def __init__(self, barrier: threading.Barrier, timeout_s: float) -> None:
        self._barrier = barrier
        self._timeout_s = timeout_s

    def arrive(self) -> bool:
        try:
            self._barrier.wait(self._timeout_s)
        except threading.BrokenBarrierError:
            return False
        return True

    def abort(self) -> None:
        self._barrier.abort()


def _client_process(spec: ClientSpec, gate: BarrierGate, reports: Any) -> None:
    # Ctrl-C reaches the whole process group; the parent ends the clients, and
    # a client must not print a traceback of its own on the way out.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _end_with_parent()
    reports.put(run_client(spec, gate))


def _end_with_parent() -> None:
    """End this client the moment the process that started it ends, even by ``kill -9``.

    A forked client's parent is the fork server, which lives as long as any
    client does, so the kernel's parent-death signal would never fire; the
    sentinel of :func:`multiprocessing.parent_process` is a pipe from the
    process that called ``start()`` and reads end-of-file when it is gone.
    """
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        parent.join()
        os._exit(_PARENT_GONE)

    threading.Thread(target=watch, name="stratabench-parent-watch", daemon=True).start()


def _context(preload: tuple[str, ...]) -> BaseContext:
    """``forkserver`` where there is one; the fork server is started once per process, with the first preload."""
    # Before the first semaphore: after a kill -9, the next run's start removes them and the fork server's directory.
    claim_multiprocessing()
    context: BaseContext
    if "forkserver" in multiprocessing.get_all_start_methods():
        forking = multiprocessing.get_context("forkserver")
        forking.set_forkserver_preload([*_PRELOAD, *preload])
        context = forking
    else:
        context = multiprocessing.get_context("spawn")
    _start_helpers_deaf_to_hangup(context)
    return context


def _start_helpers_deaf_to_hangup(context: BaseContext) -> None:
    """Start multiprocessing's resource tracker and fork server with SIGHUP ignored, which they inherit.

    A closed terminal sends SIGHUP to the whole process group. The helpers
    do not ignore it as they ignore SIGINT and SIGTERM: the fork server died
    at once and the tracker printed a ``KeyError`` traceback per semaphore,
    while this process was still stopping its clients and deleting their
    keys. Ignored, they end as they do after Ctrl-C, when this process does.
    """
    from multiprocessing import resource_tracker

    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        resource_tracker.ensure_running()
        if context.get_start_method() == "forkserver":
            from multiprocessing import forkserver

            forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGHUP, previous)


class LocalProcesses:
    """Runs clients as processes of this machine (the default client runner)."""

    description = "local processes"

    def run(self, specs: Sequence[ClientSpec], timeout_s: float) -> list[ClientReport]:
        """Run one process per spec and return their reports in client order.

        A client whose process died, or that had not reported within
        ``timeout_s``, gets a report with ``fatal`` saying so; no process
        outlives the call.
        """
        context = _context(specs[0].requests.preload)
        gate = BarrierGate(context.Barrier(len(specs)), specs[0].gate_timeout_s if specs else 0)
        reports: Any = context.Queue()
        processes = [
            context.Process(  # type: ignore[attr-defined]
                target=_client_process, args=(spec, gate, reports), name=f"stratabench-load-client-{spec.index}",
                daemon=True,
            )
            for spec in specs
        ]
        received: dict[int, ClientReport] = {}
        try:
            for process in processes:
                process.start()
            self._collect(specs, processes, gate, reports, received, time.monotonic() + timeout_s)
        finally:
            _end(processes)
            reports.close()
            reports.join_thread()
        return [received[spec.index] for spec in specs]

    @staticmethod
    def _collect(
        specs: Sequence[ClientSpec],
        processes: list[BaseProcess],
        gate: BarrierGate,
        reports: Any,
        received: dict[int, ClientReport],
        deadline: float,
    ) -> None:
        while len(received) < len(specs):
            try:
                report: ClientReport = reports.get(timeout=_POLL_S)
            except queue.Empty:
                pass
            else:
                received[report.index] = report
                continue
            # A report is put before its process exits, so an exited process
            # whose report is still missing after the queue ran dry is dead.
            for spec, process in zip(specs, processes, strict=True):
                if spec.index not in received and process.exitcode is not None:
                    received[spec.index] = ClientReport.not_run(
                        spec, f"client {spec.index} died (exit code {process.exitcode})", pid=process.pid
                    )
                    gate.abort()  # the others must not wait at the barrier for a client that is gone
            if time.monotonic() > deadline:
                for spec, process in zip(specs, processes, strict=True):
                    if spec.index not in received:
                        received[spec.index] = ClientReport.not_run(
                            spec, f"client {spec.index} had not finished after its time was up", pid=process.pid
                        )
                return

    def close(self) -> None:
        """Nothing to release: processes live only as long as one :meth:`run`."""

    def __enter__(self) -> LocalProcesses:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _end(processes: list[BaseProcess]) -> None:
    """Join every process; terminate, then kill, those that do not end."""
    deadline = time.monotonic() + _END_GRACE_S
    for process in processes:
        if process.pid is not None:
            process.join(max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.terminate()
            process.join(1.0)
        if process.is_alive():
            process.kill()
            process.join()
