"""Clients written in Go: one ``stratabench-go load`` process per client.

A Python client costs microseconds of its own per request, as much as a
Redis round trip; a Go client costs a fraction of that. Running the same
configuration with both says how much of a figure is the client's.

:class:`GoProcesses` is a client runner like
:class:`~stratabench.load.processes.LocalProcesses`: it takes the same
:class:`~stratabench.load.client.ClientSpec` and returns the same
:class:`~stratabench.load.client.ClientReport`. The Go client
(``go/internal/loadclient``) lives the life of
:func:`~stratabench.load.client.run_client` for store requests: it loads its
keys, waits at the start gate, runs the closed or open loop, checks every
read against the integrity stamp of :mod:`stratabench.load.integrity` (the
same bytes), and records latencies in HdrHistogram's Go port, whose V2
encoding :func:`stratabench.load.histogram.decode` reads, so that the
histograms merge exactly with each other and with Python clients'.

What travels, one JSON line each way (the narrow channel):

- in, on the client's stdin: its spec, with the request plan drawn here
  (:meth:`~stratabench.load.store_requests.StoreRequestPlan.operations`, so
  a Go client sends the very requests a Python client of the same seed
  would), the store's settings resolved here, its key prefix, and the file
  it appends each finished interval to (:mod:`stratabench.load.spill`: the
  same lines as a Python client's);
- out, on its stdout: ``{"ready": true}`` once its keys are loaded, then
  its report, field for field a :class:`ClientReport`;
- in again: ``go`` once every client is ready. Closing a client's stdin
  calls the run off, and ends a client whose parent died.

Go clients load Redis only (:data:`GO_SCHEMES`); they run on this machine,
not on a cluster.
"""

from __future__ import annotations

import base64
import collections
import json
import queue
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import IO, Any

from stratabench.adapters import golang
from stratabench.errors import UsageError
from stratabench.layers.stores import store_for_scheme
from stratabench.layers.stores.base import parse_store_url
from stratabench.layers.stores.namespaces import key_prefix
from stratabench.lifeline import popen_tied
from stratabench.load.client import ClientReport, ClientSpec
from stratabench.load.spill import client_file
from stratabench.load.store_requests import StoreRequestPlan
from stratabench.settings import SettingReader

__all__ = ["GO_SCHEMES", "GoProcesses", "check_go_store", "go_client_input"]

GO_SCHEMES = ("redis", "rediss")
"""The store URL schemes Go clients load."""

_PROGRAM = "stratabench-go"
_END_GRACE_S = 3.0
_STDERR_TAIL = 5


def check_go_store(store_url: str) -> None:
    """Refuse, in one line, a store Go clients cannot load."""
    scheme = parse_store_url(store_url).scheme
    if scheme not in GO_SCHEMES:
        raise UsageError(f"Go clients load {', '.join(GO_SCHEMES)} stores, not {scheme}://; "
                         "use --client-lang python for this store")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def go_client_input(spec: ClientSpec) -> dict[str, Any]:
    """The JSON a Go client reads on its stdin (see the module docstring)."""
    plan = spec.requests
    if not isinstance(plan, StoreRequestPlan):
        raise UsageError(f"Go clients send store requests only, not {type(plan).__name__}; use Python clients")
    check_go_store(plan.store_url)
    from stratabench.layers.stores import STORES

    name = store_for_scheme(parse_store_url(plan.store_url).scheme)
    config = SettingReader(STORES.get(name), plan.options)
    operations = plan.operations(spec.index)
    return {
        "index": spec.index, "clients": spec.clients, "rate_per_s": spec.rate_per_s, "phase": spec.phase,
        "warmup_s": spec.warmup_s, "duration_s": spec.duration_s, "intervals": spec.intervals,
        "max_consecutive_errors": spec.max_consecutive_errors,
        "store": {"url": plan.store_url, "key_ttl_s": config.whole(f"{name}.key_ttl"),
                  "connect_timeout_s": config.number(f"{name}.connect_timeout"),
                  "socket_timeout_s": config.number(f"{name}.socket_timeout")},
        "prefix": key_prefix(plan.namespace).decode(), "first_key": plan.first_key,
        "payloads": [_b64(payload) for payload in plan.payloads],
        "reads": _b64(bytes(operations.reads)),
        "keys": _b64(b"".join(key.to_bytes(4, "little") for key in operations.keys)),
        "spill": "" if spec.spill is None else str(client_file(spec.spill, spec.index)),
    }  # fmt: skip


def report_from_json(data: dict[str, Any]) -> ClientReport:
    """A Go client's report line as a :class:`ClientReport`."""
    return ClientReport(**{**data, "kinds": dict(data.get("kinds") or {}),
                           "interval_histograms": tuple(data["interval_histograms"])})


class _Client:
    """One Go client process, its stdout lines on a shared queue, its stderr's tail kept."""

    def __init__(self, spec: ClientSpec, lines: queue.Queue[tuple[int, str | None]]) -> None:
        self.spec = spec
        self.stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL)
        # A session of its own: a Ctrl-C in the terminal reaches stratabench, which ends the
        # clients; the kernel ends them if stratabench is killed (popen_tied), and so does stdin closing.
        self.process = popen_tied([str(golang.binary_path(_PROGRAM)), "load"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        assert self.process.stdout is not None and self.process.stderr is not None
        self.threads = [threading.Thread(target=self._read, args=(self.process.stdout, lines), daemon=True),
                        threading.Thread(target=self._drain, args=(self.process.stderr,), daemon=True)]
        for thread in self.threads:
            thread.start()

    def _read(self, stream: IO[bytes], lines: queue.Queue[tuple[int, str | None]]) -> None:
        for line in stream:
            lines.put((self.spec.index, line.decode("utf-8", "replace")))
        lines.put((self.spec.index, None))

    def _drain(self, stream: IO[bytes]) -> None:
        for line in stream:
            self.stderr.append(line.decode("utf-8", "replace").strip())

    def say(self, text: str) -> None:
        """Write one line to the client; a client that is gone is noticed by its missing report."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(text.encode() + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def hang_up(self) -> None:
        if self.process.stdin is not None and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except OSError:
                pass

    def died(self) -> ClientReport:
        code = self.process.wait()
        tail = " | ".join(line for line in self.stderr if line) or "nothing on stderr"
        return ClientReport.not_run(self.spec, f"Go client {self.spec.index} died (exit code {code}): {tail}",
                                    pid=self.process.pid)


class GoProcesses:
    """Runs clients as ``stratabench-go load`` processes of this machine.

    Building the program (when its sources changed) happens here, before
    anything starts; a machine without Go and without a built program gets
    one line saying how to install it.
    """

    description = "Go processes"
    spills = True

    def __init__(self) -> None:
        golang.ensure_built((_PROGRAM,))

    def run(self, specs: Sequence[ClientSpec], timeout_s: float) -> list[ClientReport]:
        """One Go process per spec; reports in client order, and no process outlives the call."""
        inputs = [json.dumps(go_client_input(spec), separators=(",", ":")) for spec in specs]
        lines: queue.Queue[tuple[int, str | None]] = queue.Queue()
        deadline = time.monotonic() + timeout_s
        clients: list[_Client] = []
        reports: dict[int, ClientReport] = {}
        try:
            for spec, text in zip(specs, inputs, strict=True):
                clients.append(_Client(spec, lines))
                clients[-1].say(text)
            by_index = {client.spec.index: client for client in clients}
            gate_deadline = min(deadline, time.monotonic() + (specs[0].gate_timeout_s if specs else 0))
            ready = self._collect(by_index, lines, reports, gate_deadline, until_ready=True)
            if len(ready) == len(specs):
                for client in clients:
                    client.say("go")
                self._collect(by_index, lines, reports, deadline, until_ready=False)
            called_off = len(ready) < len(specs)
            for spec in specs:
                if spec.index not in reports:
                    why = ("the run was called off before it started" if called_off
                           else f"Go client {spec.index} had not finished after its time was up")
                    reports[spec.index] = ClientReport.not_run(spec, why, pid=by_index[spec.index].process.pid)
        finally:
            _end(clients)
        return [reports[spec.index] for spec in specs]

    @staticmethod
    def _collect(clients: dict[int, _Client], lines: queue.Queue[tuple[int, str | None]],
                 reports: dict[int, ClientReport], deadline: float, *, until_ready: bool) -> set[int]:
        """Read lines until every client is ready (or reported), or has reported; returns those ready."""
        ready: set[int] = set()
        while time.monotonic() < deadline:
            waiting = [i for i in clients if i not in reports and not (until_ready and i in ready)]
            if not waiting:
                break
            if until_ready and any(i in reports for i in clients):
                break  # a client failed before the start: the run is called off
            try:
                index, line = lines.get(timeout=min(0.2, max(0.0, deadline - time.monotonic())))
            except queue.Empty:
                continue
            if line is None:  # its stdout closed: a report was due before that
                if index not in reports:
                    reports[index] = clients[index].died()
                continue
            try:
                data = json.loads(line)
            except ValueError:
                data = {"fatal": f"Go client {index} printed {line.strip()[:100]!r}, not JSON"}
            if "fatal" in data and "histogram" not in data:
                reports[index] = ClientReport.not_run(clients[index].spec, data["fatal"], pid=clients[index].process.pid)
            elif data.get("ready"):
                ready.add(index)
            else:
                reports[index] = report_from_json(data)
        return ready

    def close(self) -> None:
        """Nothing to release: processes live only as long as one :meth:`run`."""


def _end(clients: Sequence[_Client]) -> None:
    """Hang up on every client, give them a moment to exit, then kill those that did not."""
    for client in clients:
        client.hang_up()
    deadline = time.monotonic() + _END_GRACE_S
    for client in clients:
        try:
            client.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            client.process.kill()
            client.process.wait()
    for client in clients:
        for thread in client.threads:
            thread.join(1.0)
        for stream in (client.process.stdout, client.process.stderr):
            if stream is not None:
                stream.close()
