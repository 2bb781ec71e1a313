"""One load client: prepares, waits for the start, sends requests in a closed or open loop, reports.

:func:`run_client` is the whole life of one client, and the same function
runs in a local process (:mod:`stratabench.load.processes`) and as a task on
a Dask cluster (:mod:`stratabench.load.cluster`). Its input is a
:class:`ClientSpec`, its output one :class:`ClientReport` whose latencies
are encoded histograms: nothing else travels back.

*What* a client sends is not this module's business: a
:class:`RequestPlan` (picklable, part of the spec) opens a
:class:`RequestSource` inside the client's process, which prepares
(untimed) and then sends one request per call, checking what comes back.
Store requests are :mod:`stratabench.load.store_requests`; a driver of a
service would be another plan, and nothing here would change.

The steps, in order:

1. Open the request source and prepare it (the store clients put their own
   keys). Untimed.
2. Wait at the start gate until every client has prepared, so that their
   measurement windows overlap. Each client then reads its own monotonic
   clock; no clock is ever compared with another machine's.
3. Run: warm-up first (not recorded), then ``duration_s`` of measurement.

   - *Closed loop* (no rate): send, wait for the answer, send the next. The
     latency is answer time minus send time.
   - *Open loop* (``rate_per_s``): request ``k`` is due at
     ``start + (k + phase) / rate``. The client sleeps until it is due or,
     when it is late, sends at once; the latency is answer time minus *due*
     time, so the time a request spent waiting behind a slow one is counted
     (no coordinated omission; wrk2 does the same). Requests still not sent
     when the window closes are counted as ``unsent``.

4. Record the raw latencies into HDR histograms (one per interval of the
   window, and their sum), encode them, and report.

A client asked to stop (:func:`stop`, from a signal handler: the run was
interrupted) ends its loop after the request in flight and reports what
it measured, with ``fatal`` saying so; the parent keeps the intervals that
finished (:func:`~stratabench.load.run.interrupted_result`). A client
given a spill directory also writes each interval there as it finishes
(:mod:`stratabench.load.spill`), for the next command to keep when the
load is killed with ``kill -9``, when no report can travel.

A request that raises a :class:`~stratabench.errors.StratabenchError` (a
:class:`~stratabench.errors.StoreError`, mostly) is counted as an error,
not a latency; ``max_consecutive_errors`` in a row mean the server is gone,
and the client stops early with that error as ``fatal``, keeping every
latency taken so far.
"""

from __future__ import annotations

import math
import os
import socket
import time
from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import psutil

from stratabench.errors import StratabenchError
from stratabench.load.histogram import encode, histogram_of
from stratabench.load.integrity import CheckFailures
from stratabench.load.spill import SecondsSpill

__all__ = ["ClientReport", "ClientSpec", "RequestPlan", "RequestSource", "StartGate", "attach_reports",
           "attached_reports", "run_client", "stop"]

# Sleeping overshoots by tens of microseconds, as much as a whole Redis round
# trip, so a paced client sleeps to just before a request is due and spins
# the rest; the spin is pacing, not work, and is left out of the busy figure.
_SPIN_NS = 300_000
_NS = 1_000_000_000

# Why this process's client was asked to stop early; a plain global, read once per request.
_stop_reason: str | None = None


def stop(reason: str) -> None:
    """Ask the client running in this process to stop after its request in flight and report (a signal handler's job).

    ``reason`` becomes the report's ``fatal``; the first reason stays (a
    Ctrl-C to the terminal, then the parent's own request to stop).
    """
    global _stop_reason
    if _stop_reason is None:
        _stop_reason = reason


class StartGate(Protocol):
    """Where clients wait for each other between preparing and measuring."""

    def arrive(self) -> bool:
        """Wait until every client has arrived: ``True`` to start, ``False`` when the run was called off."""

    def abort(self) -> None:
        """Call the run off: clients waiting, or still to arrive, get ``False``."""


class RequestSource(Protocol):
    """What one client sends, opened inside the client's own process."""

    @property
    def check_failures(self) -> CheckFailures:
        """Answers that were not what they had to be, counted with the first in words."""

    def prepare(self) -> None:
        """Untimed set-up before the start (load the client's keys)."""

    def send(self) -> str:
        """Send one request and check its answer; return its kind (``read``, ``update``).

        Raise a :class:`~stratabench.errors.StratabenchError` when the request failed.
        """

    def close(self) -> None:
        """Release connections; called once, whatever happened."""


class RequestPlan(Protocol):
    """The picklable description of what every client sends; opens one source per client."""

    @property
    def preload(self) -> tuple[str, ...]:
        """Modules worth importing once before clients start (slow drivers)."""

    def open(self, index: int) -> RequestSource:
        """The request source of client ``index`` (called in the client's process)."""


@dataclass(frozen=True)
class ClientSpec:
    """What one client does; picklable, so it travels to a process or a cluster worker.

    Attributes
    ----------
    index, clients
        This client's number and how many there are.
    requests
        What the clients send (:class:`RequestPlan`).
    rate_per_s
        Requests per second for an open loop; ``None`` for a closed loop.
    phase
        Fraction of one request interval by which this client's schedule is
        offset, so that clients of an open loop do not send in step.
    warmup_s, duration_s
        Seconds of unrecorded warm-up, then of measurement.
    intervals
        The measurement window is cut into this many equal intervals, each
        with its own histogram.
    max_consecutive_errors
        Failed requests in a row after which the client stops (the server is gone).
    gate_timeout_s
        Longest wait at the start gate.
    spill
        A directory where the client appends each interval the moment it
        finishes (:mod:`stratabench.load.spill`), for the next command to
        keep after a ``kill -9``; ``None`` for none.
    """

    index: int
    clients: int
    requests: RequestPlan
    rate_per_s: float | None
    warmup_s: float
    duration_s: float
    intervals: int
    phase: float = 0.0
    max_consecutive_errors: int = 5
    gate_timeout_s: float = 120.0
    spill: str | None = None


@dataclass(frozen=True)
class ClientReport:
    """What one client measured. Every count covers the measurement window unless said otherwise.

    Attributes
    ----------
    index, host, pid, host_cpus
        Which client, where it ran, and how many CPUs that host lets it use.
    ops
        Requests answered in the window (requests *sent*, or due, in it).
    kinds
        ``ops`` by kind of request (``read``, ``update``).
    errors, first_error
        Requests that failed, warm-up included, and the first failure in words.
    failed_checks, first_failed_check
        Answers that were not what they had to be (a value not as written:
        see :mod:`stratabench.load.integrity`), and the first in words.
    histogram
        Encoded histogram of every latency in the window, in nanoseconds.
    interval_histograms
        One encoded histogram per interval of the window; they add up to ``histogram``.
    window_s
        Length of the window the client measured (shorter when it stopped early).
    busy_cpu_s, wall_s
        CPU this client's thread spent on work (pacing spins excluded) and
        wall time, over warm-up and window; their ratio is how busy it was.
    host_busy
        Share of all the host's CPUs that was busy meanwhile, with every
        process on it (the other clients, the server if it runs there, and
        anything else).
    scheduled, unsent, final_lag_ns
        Open loop only (else ``None``): requests due in the window, those
        never sent because the window closed first, and how late the last
        request was sent.
    fatal
        Why the client stopped early or never started, one line; ``None`` if it ran to the end.
    """

    index: int
    host: str
    pid: int
    host_cpus: int
    ops: int
    kinds: Mapping[str, int]
    errors: int
    first_error: str | None
    failed_checks: int
    first_failed_check: str | None
    histogram: str
    interval_histograms: tuple[str, ...]
    window_s: float
    busy_cpu_s: float
    wall_s: float
    host_busy: float
    scheduled: int | None
    unsent: int | None
    final_lag_ns: int | None
    fatal: str | None

    @classmethod
    def not_run(cls, spec: ClientSpec, why: str, *, host: str | None = None, pid: int | None = None) -> ClientReport:
        """The report of a client that never measured (or whose process died), with why.

        ``host`` and ``pid`` default to this process's; pass them for a client
        that ran elsewhere (``pid=0`` when it is not known).
        """
        empty = encode(histogram_of([]))
        return cls(
            index=spec.index, host=socket.gethostname() if host is None else host,
            pid=os.getpid() if pid is None else pid, host_cpus=_available_cpus(),
            ops=0, kinds={}, errors=0, first_error=None, failed_checks=0, first_failed_check=None,
            histogram=empty, interval_histograms=(empty,) * spec.intervals,
            window_s=0.0, busy_cpu_s=0.0, wall_s=0.0, host_busy=0.0, scheduled=None, unsent=None, final_lag_ns=None, fatal=why,
        )  # fmt: skip

    @property
    def busy_fraction(self) -> float:
        """Share of one core this client kept busy (1.0: it was the bottleneck)."""
        return self.busy_cpu_s / self.wall_s if self.wall_s > 0 else 0.0


_REPORTS_ATTRIBUTE = "stratabench_client_reports"


def attach_reports(interrupt: BaseException, reports: Sequence[ClientReport]) -> None:
    """Give an interrupt (Ctrl-C, SIGTERM, SIGHUP) what the interrupted clients reported, in client order.

    The interrupt itself travels on unchanged, so every caller stops as
    on any Ctrl-C and the exit status still names the signal; one that
    keeps results reads the reports back with :func:`attached_reports`.
    """
    setattr(interrupt, _REPORTS_ATTRIBUTE, tuple(reports))


def attached_reports(interrupt: BaseException) -> tuple[ClientReport, ...]:
    """The client reports :func:`attach_reports` gave ``interrupt``; empty when it has none."""
    reports: tuple[ClientReport, ...] = getattr(interrupt, _REPORTS_ATTRIBUTE, ())
    return reports


def _one_line(error: BaseException) -> str:
    if isinstance(error, StratabenchError):
        return error.message
    return f"{type(error).__name__}: {' '.join(str(error).split())}"


def _available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class _Run:
    """The mutable state of one client's run: counts, raw latencies, pacing; :func:`run_client` drives it."""

    def __init__(self, spec: ClientSpec, requests: RequestSource) -> None:
        self.spec = spec
        self.requests = requests
        self.latencies = array("q")
        self.offsets = array("q")  # send (or due) time minus window start: which interval
        self.kinds: Counter[str] = Counter()
        self.errors = 0
        self.consecutive_errors = 0
        self.first_error: str | None = None
        self.fatal: str | None = None
        self.spun_ns = 0
        # Set by _measure when the loop starts: what a spilled interval's counts are taken from.
        self.started = self.cpu_start = 0
        self.host_start: Any = None
        self.window_ns = int(spec.duration_s * _NS)
        self.spill = SecondsSpill(spec.spill, spec.index) if spec.spill is not None else None
        self.spilled = 0  # intervals written to the spill
        self.spilled_latencies = 0  # latencies in them
        # Where in the window the next interval to spill ends: as far as the slots of interval_histograms go.
        self.spill_at = self._end_of(0) if self.spill is not None else 2**63

    def request(self) -> str | None:
        """Send the next request; its kind, or ``None`` when it failed."""
        try:
            kind = self.requests.send()
        except StratabenchError as error:
            self.errors += 1
            self.consecutive_errors += 1
            if self.first_error is None:
                self.first_error = error.message
            if self.consecutive_errors >= self.spec.max_consecutive_errors:
                self.fatal = error.message
            return None
        self.consecutive_errors = 0
        return kind

    def answered(self, kind: str, latency: int, offset: int) -> None:
        """Keep one answered request of the window."""
        self.latencies.append(latency)
        self.offsets.append(offset)
        self.kinds[kind] += 1

    def _end_of(self, interval: int) -> int:
        """The first offset into the window (ns) past ``interval``: the slot rule of :meth:`interval_histograms`."""
        return -(-(interval + 1) * self.window_ns // self.spec.intervals)

    def spill_until(self, offset: int) -> None:
        """Write every interval over by ``offset`` (ns into the window) not written yet, one line each.

        Called before the request at ``offset`` is sent: every request of an
        earlier interval is recorded by then, since offsets only grow.
        """
        assert self.spill is not None
        while self.spilled < self.spec.intervals and offset >= self._end_of(self.spilled):
            latencies = self.latencies[self.spilled_latencies:]
            self.spill.write({
                "index": self.spec.index, "interval": self.spilled, "histogram": encode(histogram_of(latencies)),
                "kinds": dict(self.kinds), "errors": self.errors, "first_error": self.first_error,
                "failed_checks": self.requests.check_failures.count,
                "first_failed_check": self.requests.check_failures.first,
                "busy_cpu_s": max(0, time.thread_time_ns() - self.cpu_start - self.spun_ns) / _NS,
                "wall_s": (time.perf_counter_ns() - self.started) / _NS,
                "host_busy": _busy_share(self.host_start, psutil.cpu_times()),
                "host": socket.gethostname(), "pid": os.getpid(), "host_cpus": _available_cpus(),
            })  # fmt: skip
            self.spilled += 1
            self.spilled_latencies += len(latencies)
        self.spill_at = self._end_of(self.spilled) if self.spilled < self.spec.intervals else 2**63

    def closed_loop(self, window_start: int, deadline: int) -> int:
        """Send requests back to back until ``deadline``; returns when the client stopped."""
        clock = time.perf_counter_ns
        while self.fatal is None and _stop_reason is None:
            sent = clock()
            while sent - window_start >= self.spill_at:
                self.spill_until(sent - window_start)
                sent = clock()  # the spill's time is not the request's (and may end another interval)
            if sent >= deadline:
                return sent
            kind = self.request()
            if kind is not None and sent >= window_start:
                self.answered(kind, clock() - sent, sent - window_start)
        return clock()

    def open_loop(self, start: int, window_start: int, deadline: int, rate: float) -> tuple[int, int, int, int]:
        """Send request ``k`` when it is due; returns (stopped, scheduled, unsent, final lag)."""
        clock = time.perf_counter_ns
        interval = _NS / rate
        k = 0
        lag = 0
        while self.fatal is None and _stop_reason is None:
            due = start + int((k + self.spec.phase) * interval)
            if due - window_start >= self.spill_at:
                self.spill_until(due - window_start)  # while it would wait anyway, when it is on time
            now = clock()
            if due >= deadline or now >= deadline:
                break
            if now < due:
                self._wait_until(due)
            lag = max(0, now - due)
            kind = self.request()
            if kind is not None and due >= window_start:
                self.answered(kind, clock() - due, due - window_start)
            k += 1
        stopped = clock()

        def due_before(moment: int) -> int:
            return max(0, math.ceil((moment - start) / interval - self.spec.phase))

        return stopped, due_before(deadline) - due_before(window_start), max(0, due_before(deadline) - k), lag

    def _wait_until(self, due: int) -> None:
        remaining = due - time.perf_counter_ns()
        if remaining > _SPIN_NS:
            time.sleep((remaining - _SPIN_NS) / _NS)
        spin_start = time.perf_counter_ns()
        while time.perf_counter_ns() < due:
            pass
        self.spun_ns += time.perf_counter_ns() - spin_start

    def interval_histograms(self, window_ns: int) -> tuple[str, tuple[str, ...]]:
        import numpy as np

        latencies = np.frombuffer(self.latencies, dtype=np.int64) if self.latencies else np.zeros(0, np.int64)
        offsets = np.frombuffer(self.offsets, dtype=np.int64) if self.offsets else np.zeros(0, np.int64)
        intervals = self.spec.intervals
        slot = np.minimum(offsets * intervals // max(window_ns, 1), intervals - 1)
        each = tuple(encode(histogram_of(latencies[slot == i])) for i in range(intervals))
        return encode(histogram_of(latencies)), each


def run_client(spec: ClientSpec, gate: StartGate) -> ClientReport:
    """Run one client from start to report (see the module docstring); a failure becomes the report's ``fatal``."""
    requests: RequestSource | None = None
    try:
        requests = spec.requests.open(spec.index)
        requests.prepare()
    except Exception as error:  # noqa: BLE001 -- any failure before the start calls the run off
        gate.abort()
        if requests is not None:
            requests.close()
        return ClientReport.not_run(spec, _one_line(error))
    try:
        if not gate.arrive():
            return ClientReport.not_run(spec, "the run was called off before it started")
        return _measure(_Run(spec, requests))
    finally:
        requests.close()


def _measure(run: _Run) -> ClientReport:
    spec = run.spec
    host_start = run.host_start = psutil.cpu_times()
    cpu_start, started = run.cpu_start, run.started = time.thread_time_ns(), time.perf_counter_ns()
    window_start = started + int(spec.warmup_s * _NS)
    deadline = window_start + int(spec.duration_s * _NS)
    scheduled = unsent = final_lag = None
    try:
        if spec.rate_per_s is None:
            stopped = run.closed_loop(window_start, deadline)
        else:
            stopped, scheduled, unsent, final_lag = run.open_loop(started, window_start, deadline, spec.rate_per_s)
    except Exception as error:  # noqa: BLE001 -- keep what was measured, report why it stopped
        run.fatal = _one_line(error)
        stopped = time.perf_counter_ns()
    if run.fatal is None and _stop_reason is not None and stopped < deadline:
        run.fatal = _stop_reason
    if run.spill is not None:
        run.spill_until(min(stopped, deadline) - window_start)  # the last interval, when the window is whole
        run.spill.close()
    busy_cpu_ns = time.thread_time_ns() - cpu_start - run.spun_ns
    host_busy = _busy_share(host_start, psutil.cpu_times())
    window_ns = max(0, min(stopped, deadline) - window_start)
    total, each = run.interval_histograms(int(spec.duration_s * _NS))
    return ClientReport(
        index=spec.index, host=socket.gethostname(), pid=os.getpid(), host_cpus=_available_cpus(),
        ops=len(run.latencies), kinds=dict(run.kinds), errors=run.errors, first_error=run.first_error,
        failed_checks=run.requests.check_failures.count, first_failed_check=run.requests.check_failures.first,
        histogram=total, interval_histograms=each,
        window_s=window_ns / _NS, busy_cpu_s=max(0, busy_cpu_ns) / _NS, wall_s=(stopped - started) / _NS,
        host_busy=host_busy, scheduled=scheduled, unsent=unsent, final_lag_ns=final_lag, fatal=run.fatal,
    )  # fmt: skip


def _busy_share(before: Any, after: Any) -> float:
    """Share of all the host's CPU time that was not idle between two ``psutil.cpu_times()``."""
    elapsed = sum(after) - sum(before)
    idle = (after.idle - before.idle) + (getattr(after, "iowait", 0.0) - getattr(before, "iowait", 0.0))
    return max(0.0, min(1.0, 1 - idle / elapsed)) if elapsed > 0 else 0.0

