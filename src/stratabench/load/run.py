"""One load configuration: check it, run its clients, merge what they measured, say what it means.

A configuration is a :class:`Pacing` (clients, closed loop or rate,
durations) plus what its clients send (:meth:`Pacing.plans`):
:class:`LoadSpec` for a store, a study's own subclass for a service (its
drivers). :func:`run_clients` runs the clients of any of them and
:func:`merge_reports` merges them; :func:`run_load` is the whole of a
store's configuration, with a client runner — :class:`~.processes.LocalProcesses`
by default, :class:`~.cluster.DaskClients` for a cluster — returning a
:class:`LoadResult`. In order:

1. Check the spec: bad numbers are refused when the spec is built, before
   anything starts.
2. Open the store once here, so an unreachable server is one line before
   any client starts.
3. Split the keys among the clients (each owns its own range: see
   :mod:`stratabench.load.integrity`) and the rate among them (an open loop
   at ``R`` is ``C`` schedules of ``R/C``, offset from each other).
4. Run the clients and merge their histograms: the total, and interval by
   interval, each an exact bucket-by-bucket sum.
5. Diagnose: a client that kept its core busy, a host whose clients used
   its CPUs, an open loop that fell behind its schedule. These are warnings
   about the *clients*, so that a saturated client is not read as a slow
   server.
6. Delete the run's keys (and nothing else) from the store.

A client that stopped early (the server died) makes the result ``failed``
with one line, and every histogram taken before is kept; so does an answer
that failed its check (a read not as written).
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol

from stratabench.errors import StoreError, UsageError
from stratabench.layers.stores import open_store
from stratabench.load.client import ClientReport, ClientSpec, RequestPlan
from stratabench.load.histogram import LatencySummary, decode, encode, merge, summarize_histogram
from stratabench.load.store_requests import StoreRequestPlan
from stratabench.load.workload import workload
from stratabench.options import RunOptions
from stratabench.redact import redact

__all__ = ["CLIENT_LANGS", "ClientRunner", "LoadResult", "LoadSpec", "Pacing", "default_runner", "interrupted_result",
           "merge_reports", "run_clients", "run_load"]

BUSY_CLIENT = 0.9
"""A client that kept this share of a core busy is saturated: it, not the server, set the pace."""

CLIENT_LANGS = ("python", "go")
"""What load clients can be written in."""

ON_SCHEDULE = 0.95
"""An open loop that answered less than this share of the requests due in its window fell behind."""


class ClientRunner(Protocol):
    """Runs clients somewhere: :class:`~.processes.LocalProcesses`, :class:`~.cluster.DaskClients`."""

    description: str
    #: Whether its clients spill each finished second to :class:`~.client.ClientSpec`'s ``spill`` directory.
    spills: bool

    def run(self, specs: Sequence[ClientSpec], timeout_s: float) -> list[ClientReport]:
        """Run every client to its report, in client order; leave no client running."""

    def close(self) -> None:
        """Release what the runner holds (a cluster, connections)."""


def _positive(value: float, what: str, hint: str) -> None:
    if not value > 0 or not math.isfinite(value):
        raise UsageError(f"{what} must be a positive number, not {value:g}; {hint}")


@dataclass(frozen=True, kw_only=True)
class Pacing:
    """How many clients, at what pace, for how long: what every load configuration has, whatever it loads.

    A configuration of a store (:class:`LoadSpec`) or of a service (a
    study's own subclass) adds what its clients send (:meth:`plans`) and
    how its cells are named; the runners, the merge and the diagnosis only
    read this part.

    Attributes
    ----------
    clients
        Concurrent clients, each a process (or a cluster task).
    rate_per_s
        Total requests per second of an open loop; ``None`` for a closed loop.
    warmup_s, duration_s
        Seconds of unrecorded warm-up, then of measurement.
    max_consecutive_errors
        Failed requests in a row after which a client decides the server is gone.

    Raises
    ------
    UsageError
        On construction, for a count, rate or duration that cannot work.
    """

    clients: int = 1
    rate_per_s: float | None = None
    warmup_s: float = 1.0
    duration_s: float = 10.0
    max_consecutive_errors: int = 5

    def __post_init__(self) -> None:
        if self.clients < 1:
            raise UsageError(f"--clients must be at least 1, not {self.clients}")
        if self.rate_per_s is not None:
            _positive(self.rate_per_s, "--rate", "give requests per second, or leave --rate out for a closed loop")
        _positive(self.duration_s, "--duration", "give the seconds to measure")
        if not self.warmup_s >= 0:
            raise UsageError(f"--warmup must be zero or more seconds, not {self.warmup_s:g}")

    @property
    def intervals(self) -> int:
        """Intervals of the window: one per second, at least five (samples for ``compare``), at most 600."""
        return min(600, max(5, round(self.duration_s)))

    @property
    def pace(self) -> str:
        """``closed``, or ``r`` and the rate: the last part of a cell's name."""
        return "closed" if self.rate_per_s is None else f"r{self.rate_per_s:g}"

    @property
    def cell_name(self) -> str:
        """The name of this configuration's cell: ``c8/closed``; subclasses put what is loaded first."""
        return f"c{self.clients}/{self.pace}"

    @property
    def subject(self) -> tuple[str, str]:
        """What is loaded, as the first column of the load table: (header, value)."""
        return "loaded", type(self).__name__

    @property
    def title(self) -> str:
        """The load table's title."""
        return "load"

    @property
    def language(self) -> str:
        """What the clients are written in: the ``language`` of the cell."""
        return "python"

    def cell_params(self) -> dict[str, Any]:
        """The coordinates of this configuration's cell (subclasses add what is loaded)."""
        return {"clients": self.clients, "rate": self.rate_per_s, "warmup_s": self.warmup_s,
                "duration_s": self.duration_s}  # fmt: skip

    #: What an answer that passed its check is, in the integrity field of a cell.
    verified_phrase: ClassVar[str] = "answers as required"
    #: The kind of request whose answers are checked (``read``); ``None``: every request.
    checked_kind: ClassVar[str | None] = None
    #: What a failed check means, in the failure line.
    failed_check_meaning: ClassVar[str] = "answers were not what they had to be"

    def checked(self, reports: Sequence[ClientReport]) -> tuple[int, str]:
        """How many answers were checked, and what a failed check means, for the failure line."""
        if self.checked_kind is None:
            return sum(r.ops + r.errors for r in reports), self.failed_check_meaning
        return sum(r.kinds.get(self.checked_kind, 0) for r in reports), self.failed_check_meaning

    def plans(self) -> list[RequestPlan]:
        """What each client sends, one plan per client."""
        raise NotImplementedError(f"{type(self).__name__} says what its clients send in plans()")

    def client_specs(self) -> list[ClientSpec]:
        """Each client's spec: its plan (its own data) and its share of the rate, offset from the others'."""
        rate = None if self.rate_per_s is None else self.rate_per_s / self.clients
        return [
            ClientSpec(
                index=index, clients=self.clients, rate_per_s=rate, phase=index / self.clients, requests=plan,
                warmup_s=self.warmup_s, duration_s=self.duration_s, intervals=self.intervals,
                max_consecutive_errors=self.max_consecutive_errors,
            )  # fmt: skip
            for index, plan in enumerate(self.plans())
        ]


@dataclass(frozen=True)
class LoadSpec(Pacing):
    """One load configuration of a store; the pace, durations and clients are :class:`Pacing`'s.

    Attributes
    ----------
    store_url
        The store to load (``redis://127.0.0.1:6379/0``).
    payloads
        One payload per key; the keys are split among the clients, so there
        must be at least one per client.
    workload
        A :data:`~stratabench.load.workload.WORKLOADS` name.
    run_id
        Names the store namespace the run writes in (:attr:`namespace`).
    seed
        Seeds the clients' request plans.
    options
        Run options, for store settings (``--set redis.socket_timeout=...``).
    client_lang
        What the clients are written in (:data:`CLIENT_LANGS`): ``python``
        processes, or ``go`` processes (:mod:`stratabench.load.go_clients`).

    Raises
    ------
    UsageError
        On construction, for a count, rate or duration that cannot work.
    """

    store_url: str
    payloads: tuple[bytes, ...]
    workload: str = "get"
    run_id: str = "local"
    seed: int = 1
    options: RunOptions | None = field(default=None, compare=False)
    client_lang: str = "python"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.client_lang not in CLIENT_LANGS:
            raise UsageError(f"--client-lang {self.client_lang!r}: choose {' or '.join(CLIENT_LANGS)}")
        if self.client_lang == "go":
            from stratabench.load.go_clients import check_go_store

            check_go_store(self.store_url)
        workload(self.workload)
        if len(self.payloads) < self.clients:
            raise UsageError(
                f"{self.clients} clients need at least {self.clients} records, one key each, "
                f"and there are {len(self.payloads)}; use more records or fewer --clients"
            )

    @property
    def namespace(self) -> str:
        """``{run id}.load.{hash of the configuration}``: the shape ``stratabench clean`` sweeps after a killed run."""
        pace = "closed" if self.rate_per_s is None else f"{self.rate_per_s:g}"
        digest = hashlib.sha1(f"{self.workload}/{self.clients}/{pace}".encode()).hexdigest()[:10]
        return f"{self.run_id}.load.{digest}"

    @property
    def cell_name(self) -> str:
        """``workload/clients/closed`` or ``workload/clients/rate``: ``a/c8/r20000``; Go clients add ``/go``."""
        lang = "" if self.client_lang == "python" else f"/{self.client_lang}"
        return f"{self.workload}/{super().cell_name}{lang}"

    @property
    def subject(self) -> tuple[str, str]:
        return "workload", self.workload

    @property
    def language(self) -> str:
        return self.client_lang

    @property
    def title(self) -> str:
        return f"load: {redact(self.store_url)}, {len(self.payloads)} keys"

    def cell_params(self) -> dict[str, Any]:
        sizes = [len(p) for p in self.payloads]
        return {"store": redact(self.store_url), "workload": self.workload, **super().cell_params(),
                "client_lang": self.client_lang, "records": len(self.payloads),
                "payload_bytes": round(sum(sizes) / len(sizes))}  # fmt: skip

    verified_phrase = "reads as written"
    checked_kind = "read"
    failed_check_meaning = "reads did not return what was written"

    def plans(self) -> list[RequestPlan]:
        """Each client's own keys: a contiguous share of the payloads."""
        count = len(self.payloads)
        return [
            StoreRequestPlan(
                store_url=self.store_url, namespace=self.namespace, workload=self.workload, first_key=first,
                payloads=self.payloads[first:end], seed=self.seed, options=self.options,
            )  # fmt: skip
            for first, end in ((i * count // self.clients, (i + 1) * count // self.clients) for i in range(self.clients))
        ]


@dataclass(frozen=True)
class LoadResult:
    """What one configuration measured, merged over its clients.

    Attributes
    ----------
    spec
        The configuration.
    reports
        Each client's own report, histograms included.
    histogram
        The merged histogram of every latency in the window (encoded).
    interval_histograms
        Merged per interval (encoded); they add up to ``histogram``.
    latency
        Percentiles of ``histogram``.
    ops_per_s
        Requests answered per second: each client's count over its own
        window, summed (no clock of one client is compared with another's).
    interval_ops_per_s
        The same, interval by interval.
    warnings
        Full sentences about the clients (saturation, falling behind).
    client_saturated, behind_schedule
        The two findings behind the warnings, for a sweep to act on.
    error
        Why the configuration failed, one line; ``None`` when it did not.
    """

    spec: Pacing
    reports: tuple[ClientReport, ...]
    histogram: str
    interval_histograms: tuple[str, ...]
    latency: LatencySummary
    ops_per_s: float
    interval_ops_per_s: tuple[float, ...]
    warnings: tuple[str, ...]
    client_saturated: bool
    behind_schedule: bool
    error: str | None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def ops(self) -> int:
        return sum(r.ops for r in self.reports)

    @property
    def errors(self) -> int:
        return sum(r.errors for r in self.reports)

    @property
    def error_fraction(self) -> float:
        """Failed requests over all requests."""
        total = self.ops + self.errors
        return self.errors / total if total else 0.0

    @property
    def reads(self) -> int:
        return sum(r.kinds.get("read", 0) for r in self.reports)

    @property
    def checked(self) -> int:
        """Answers that were checked (reads, for a store)."""
        return self.spec.checked(self.reports)[0]

    @property
    def failed_checks(self) -> int:
        return sum(r.failed_checks for r in self.reports)

    @property
    def first_failed_check(self) -> str | None:
        return next((r.first_failed_check for r in self.reports if r.first_failed_check), None)


def default_runner(client_lang: str) -> ClientRunner:
    """Local processes of ``client_lang`` clients: Python's, or Go's."""
    if client_lang == "go":
        from stratabench.load.go_clients import GoProcesses

        return GoProcesses()
    from stratabench.load.processes import LocalProcesses

    return LocalProcesses()


def run_load(spec: LoadSpec, runner: ClientRunner | None = None, *, timeout_s: float | None = None,
             spill: str | None = None) -> LoadResult:
    """Run one configuration of a store (see the module docstring).

    Parameters
    ----------
    spec
        The configuration.
    runner
        Where the clients run; :func:`default_runner` when ``None``.
    timeout_s
        Longest wait for the clients; by default warm-up plus duration plus two minutes for loading.
    spill
        The directory the clients spill their finished seconds to (:mod:`~stratabench.load.spill`), if any.

    Raises
    ------
    StoreError
        The store cannot be reached before the start.
    UsageError
        More clients than the runner can hold.
    """
    store = open_store(spec.store_url, namespace=spec.namespace, options=spec.options, server_pids=())
    try:
        reports = run_clients(spec, runner if runner is not None else default_runner(spec.client_lang),
                              timeout_s=timeout_s, spill=spill)
    finally:
        # Also on Ctrl-C, SIGTERM or SIGHUP: the clients are stopped by now, and the keys they wrote are in
        # the user's store (with a day's TTL at most): delete them before the signal ends the command.
        try:
            store.cleanup()
        except StoreError:
            pass  # the server is gone (the result says so); it took the run's keys with it
        finally:
            store.close()
    return merge_reports(spec, reports)


def run_clients(spec: Pacing, runner: ClientRunner | None = None, *, timeout_s: float | None = None,
                spill: str | None = None) -> tuple[ClientReport, ...]:  # fmt: skip
    """Run the clients of any configuration (:meth:`Pacing.plans`) and return their reports, no client left running.

    ``runner`` is local processes when ``None``; ``timeout_s`` defaults to
    warm-up plus duration plus two minutes for preparing; ``spill`` is
    where the clients write each finished second, if the runner's clients
    can (:attr:`ClientRunner.spills`).
    """
    from stratabench.load.processes import LocalProcesses

    clients = runner if runner is not None else LocalProcesses()
    budget = timeout_s if timeout_s is not None else spec.warmup_s + spec.duration_s + 120.0
    specs = spec.client_specs()
    if spill is not None and clients.spills:
        specs = [replace(client, spill=spill) for client in specs]
    return tuple(clients.run(specs, budget))


def merge_reports(spec: Pacing, reports: Sequence[ClientReport]) -> LoadResult:
    """Merge client reports into one :class:`LoadResult`, with its diagnosis.

    The intervals are those every report has: all of the window's, or the
    finished ones of an interrupted configuration (:func:`interrupted_result`).
    """
    total = merge(r.histogram for r in reports)
    intervals = tuple(
        encode(merge(r.interval_histograms[i] for r in reports))
        for i in range(min(len(r.interval_histograms) for r in reports))
    )
    interval_s = spec.duration_s / spec.intervals
    interval_ops = tuple(decode(h).get_total_count() / interval_s for h in intervals)
    ops_per_s = sum(r.ops / r.window_s for r in reports if r.window_s > 0)
    saturated, saturation = _saturation(reports)
    behind, lateness = _lateness(spec, reports, saturated)
    return LoadResult(
        spec=spec, reports=tuple(reports), histogram=encode(total), interval_histograms=intervals,
        latency=summarize_histogram(total), ops_per_s=ops_per_s, interval_ops_per_s=interval_ops,
        warnings=tuple(saturation + lateness), client_saturated=saturated, behind_schedule=behind,
        error=_failure(spec, reports),
    )  # fmt: skip


def interrupted_result(spec: Pacing, reports: Sequence[ClientReport], interruption: str) -> LoadResult | None:
    """What an interrupted configuration measured: the intervals every client finished; ``None`` if none did.

    The clients stopped at about the same moment, each in the middle of an
    interval: the last, unfinished one is left out (its rate would read low),
    and so is any interval a client did not finish, so that every interval
    kept counts every client. Latencies and ``ops`` are those of the kept
    intervals; the counts of requests by kind, errors and checks are every
    client's whole count (each answer was checked).

    ``interruption`` says what stopped it (``terminated (SIGTERM)``) in the
    result's one-line error.
    """
    interval_s = spec.duration_s / spec.intervals
    ran = [r for r in reports if r.wall_s > 0]
    # A whole interval measured by a float clock may come out a hair short of its length.
    kept = min((min(spec.intervals, int(r.window_s / interval_s + 1e-6)) for r in ran), default=0)
    if kept == 0:
        return None
    merged = merge_reports(spec, [_first_intervals(r, kept, interval_s) for r in reports])
    measured_s = kept * interval_s
    error = (f"{interruption} after {measured_s:g} of {spec.duration_s:g} s: a partial cell of the {kept} "
             f"intervals every client finished")
    return replace(merged, error=error)


def _first_intervals(report: ClientReport, kept: int, interval_s: float) -> ClientReport:
    """``report`` cut to its first ``kept`` intervals: their latencies, their requests, their length."""
    intervals = report.interval_histograms[:kept]
    if report.wall_s == 0:
        return replace(report, interval_histograms=intervals)
    histogram = merge(intervals)
    return replace(report, histogram=encode(histogram), interval_histograms=intervals,
                   ops=histogram.get_total_count(), window_s=kept * interval_s)


def _failure(spec: Pacing, reports: Sequence[ClientReport]) -> str | None:
    stopped = [r for r in reports if r.fatal]
    if stopped and all(r.wall_s == 0 for r in stopped):
        return f"{len(stopped)} of {spec.clients} clients could not start: {stopped[0].fatal}"
    if stopped:
        first = min(stopped, key=lambda r: r.window_s)
        return (
            f"{len(stopped)} of {spec.clients} clients stopped early, client {first.index} after "
            f"{first.window_s:.1f} of {spec.duration_s:g} s: {first.fatal} (latencies measured until then are kept)"
        )
    failed = sum(r.failed_checks for r in reports)
    if failed:
        checked, meaning = spec.checked(reports)
        first_check = next(r.first_failed_check for r in reports if r.first_failed_check)
        return f"{failed} of {checked} {meaning}; first: {first_check}"
    return None


def _clients(count: int) -> str:
    return "1 client" if count == 1 else f"{count} clients"


def _saturation(reports: Sequence[ClientReport]) -> tuple[bool, list[str]]:
    warnings = []
    busy = [r for r in reports if r.wall_s > 0 and r.busy_fraction >= BUSY_CLIENT]
    if busy:
        worst = max(r.busy_fraction for r in busy)
        warnings.append(
            f"{len(busy)} of {len(reports)} clients kept a core busy (up to {worst:.0%}): the clients, not the "
            "server, may set the pace; add clients, or run them on more machines with --cluster."
        )
    by_host: dict[str, list[ClientReport]] = defaultdict(list)
    for report in reports:
        if report.wall_s > 0:
            by_host[report.host].append(report)
    crowded = False
    for host, theirs in sorted(by_host.items()):
        used = sum(r.busy_fraction for r in theirs)
        cpus = theirs[0].host_cpus
        if used >= BUSY_CLIENT * cpus:
            crowded = True
            warnings.append(
                f"the {_clients(len(theirs))} on {host} used {used:.1f} of its {cpus} CPUs: that host is saturated "
                "and the figures measure it as much as the server; spread the clients with --cluster."
            )
        elif max(r.host_busy for r in theirs) >= BUSY_CLIENT:
            crowded = True
            warnings.append(
                f"{host}, where {_clients(len(theirs))} ran, was {max(r.host_busy for r in theirs):.0%} busy with "
                f"every process on it (the clients used {used:.1f} of its {cpus} CPUs): the clients waited for a "
                "CPU, so the figures are low; run on a quieter machine or spread the clients with --cluster."
            )
    return bool(busy) or crowded, warnings


def _lateness(spec: Pacing, reports: Sequence[ClientReport], saturated: bool) -> tuple[bool, list[str]]:
    if spec.rate_per_s is None:
        return False, []
    due = sum(r.scheduled or 0 for r in reports)
    answered = sum(r.ops for r in reports)
    if due == 0 or answered >= ON_SCHEDULE * due:
        return False, []
    lag_ms = max((r.final_lag_ns or 0) for r in reports) / 1e6
    blame = (
        "the clients were saturated, so this measures them, not the server"
        if saturated
        else f"the server did not keep up with {spec.rate_per_s:g} requests/s and the latencies include the queueing"
    )
    return True, [
        f"the open loop fell behind its schedule: {answered} of {due} requests due were answered and the last "
        f"was sent {lag_ms:.1f} ms late; {blame}."
    ]
