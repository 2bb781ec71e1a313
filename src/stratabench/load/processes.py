"""Clients as processes of this machine: one process per client, never threads.

Threads of one Python process share one interpreter lock, so eight client
threads measure the lock as much as the server. Each client here is a
process of its own, started with ``forkserver`` (``spawn`` where there is
none, or where its socket's path under TMPDIR would be too long): the fork server imports the load engine once, so eight clients start
in a fraction of a second, and no client inherits the parent's threads or
open connections as a plain ``fork`` would.

The clients wait for each other at a :class:`multiprocessing.Barrier`
(:class:`BarrierGate`); a client that fails before the start breaks the
barrier, so the others give up at once instead of waiting for it. Reports
come back through a queue. Whatever happens (a finished run, a client that
died, a timeout, Ctrl-C), :meth:`LocalProcesses.run` returns or raises only
after every client process has ended: it is joined, then terminated, then
killed. When the run is interrupted (Ctrl-C, SIGTERM, SIGHUP), each client
is first asked to stop and report what it measured, and the interrupt
carries the reports (:func:`~stratabench.load.client.attached_reports`).
When stratabench itself is killed with SIGKILL, each client sees its
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
from types import FrameType, TracebackType
from typing import Any

from stratabench.load.client import ClientReport, ClientSpec, attach_reports, run_client, stop
from stratabench.scratch import claim_multiprocessing

__all__ = ["BarrierGate", "LocalProcesses"]

# Imported once by the fork server, so that every client forked from it starts warm.
_PRELOAD = ["stratabench.load.client", "numpy", "hdrh.histogram"]
_POLL_S = 0.2
_PARENT_GONE = 70  # exit status of a client whose run was killed under it
_END_GRACE_S = 3.0
#: How long an interrupted run waits for its clients' reports of what they measured.
_REPORT_GRACE_S = 5.0
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: The longest path a Unix socket can bind (``sun_path`` holds 108 bytes with its NUL), on Linux.
_UNIX_SOCKET_PATH_MAX = 107
#: The name multiprocessing gives the fork server's socket: ``tempfile.mktemp(prefix="listener-")``, 8 random letters.
_LISTENER_NAME = "listener-" + "x" * 8


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
    # Ctrl-C and a closed terminal reach the whole process group, `kill` may reach the clients alone: each
    # stops after its request in flight and reports what it measured (the parent keeps the finished
    # intervals), with no traceback of its own.
    def stop_client(signum: int, frame: FrameType | None) -> None:
        stop(f"stopped by {signal.Signals(signum).name}")

    for sig in _STOP_SIGNALS:
        signal.signal(sig, stop_client)
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
    if "forkserver" in multiprocessing.get_all_start_methods() and _fork_server_socket_fits():
        forking = multiprocessing.get_context("forkserver")
        forking.set_forkserver_preload([*_PRELOAD, *preload])
        context = forking
    else:
        context = multiprocessing.get_context("spawn")
    _start_helpers_deaf_to_stop_signals(context)
    return context


def _fork_server_socket_fits() -> bool:
    """Whether the fork server's socket path, in multiprocessing's directory under TMPDIR, can be bound.

    With a long TMPDIR (a deep CI workspace) it cannot, and the fork server
    fails with "OSError: AF_UNIX path too long"; ``spawn`` needs no socket,
    so the clients start that way instead, slower but the same clients.
    """
    from multiprocessing import util

    address = os.path.join(util.get_temp_dir(), _LISTENER_NAME)
    return len(os.fsencode(address)) <= _UNIX_SOCKET_PATH_MAX


def _start_helpers_deaf_to_stop_signals(context: BaseContext) -> None:
    """Start multiprocessing's resource tracker and fork server with SIGHUP and SIGTERM ignored, which they inherit.

    A closed terminal sends SIGHUP, and ``kill -TERM -PGID`` SIGTERM, to the
    whole process group. The fork server ignores neither (it ignores only
    SIGINT), the tracker not SIGHUP: the fork server died at once, so the
    exit status of every client was lost (255, "died", its report with it),
    and the tracker printed a ``KeyError`` traceback per semaphore, while this
    process was still collecting its clients' reports and deleting their
    keys. Ignored, they end as they do after Ctrl-C, when this process does.
    """
    from multiprocessing import resource_tracker

    if threading.current_thread() is not threading.main_thread():
        return
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGHUP, signal.SIGTERM)}
    try:
        resource_tracker.ensure_running()
        if context.get_start_method() == "forkserver":
            from multiprocessing import forkserver

            forkserver.ensure_running()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class LocalProcesses:
    """Runs clients as processes of this machine (the default client runner)."""

    description = "local processes"
    spills = True

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
        except KeyboardInterrupt as interrupt:
            # Ctrl-C, SIGTERM, SIGHUP: each client stops where it is and reports what it measured, for the
            # caller to keep (attach_reports); a second Ctrl-C gives up waiting.
            gate.abort()
            for process in processes:
                if process.is_alive():
                    process.terminate()  # a stop signal to the client: see _client_process
            self._collect(specs, processes, gate, reports, received, time.monotonic() + _REPORT_GRACE_S)
            attach_reports(interrupt, [received[spec.index] for spec in specs])
            raise
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
            if _receive(reports, received):
                continue
            # A report is in the pipe before its process exits, so an exited
            # process whose report is not there once the pipe is drained is dead.
            exited = [(spec, process) for spec, process in zip(specs, processes, strict=True)
                      if spec.index not in received and process.exitcode is not None]
            while exited and _receive(reports, received, timeout_s=0):
                pass
            for spec, process in exited:
                if spec.index not in received:
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


def _receive(reports: Any, received: dict[int, ClientReport], timeout_s: float = _POLL_S) -> bool:
    """Move the next report from the queue into ``received``; ``False`` after ``timeout_s`` without one.

    Stop signals wait until the report is in ``received`` (at most the poll
    interval): one in the middle of the read would leave the rest of the
    report in the pipe, for the interrupted run's next read to hang on, and
    one between the read and the store would drop the report.
    """
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        report: ClientReport = reports.get(timeout=timeout_s)
        received[report.index] = report
    except queue.Empty:
        return False
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    return True


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
