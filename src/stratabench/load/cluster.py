"""Clients as tasks on a Dask cluster, for when one machine cannot load the server.

Dask ``distributed`` (``stratabench[load]``) runs the very same
:func:`~stratabench.load.client.run_client` as one task per client, each
pinned to a worker thread of its own. ``--cluster`` names the cluster:

- ``local`` or ``local:N``: a :class:`distributed.LocalCluster` of ``N``
  worker *processes* (one thread each) on this machine, started for the run
  and closed after it; ``local`` has one worker per client. This is what the
  tests use.
- ``tcp://host:8786`` (or ``tls://``): an existing scheduler. Its workers
  must have the same stratabench and Python packages as this machine (the
  client's code and its report travel pickled) and must reach the store's
  URL themselves.

A worker thread runs one client at a time, and clients that waited for a
free thread would start after the others had finished, so a run needs a
thread per client: more clients than the cluster has threads is refused
before anything starts.

The start gate is a :class:`distributed.Queue` the clients report to once
they have loaded their keys, and a :class:`distributed.Event` they wait
on; the :class:`distributed.Variable` of the same name then says ``go``
when all had arrived, or ``abort`` when a client failed to prepare (it sets
both itself) or a task failed or time ran out. Each client then
times itself with its own clock; clocks of different machines are never
compared, and reports come back with their histograms encoded.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from stratabench.errors import UnavailableError, UsageError
from stratabench.load.client import ClientReport, ClientSpec, run_client

__all__ = ["ClusterAddress", "DaskClients", "DaskGate", "parse_cluster"]

_LOCAL = re.compile(r"local(?::(\d+))?\Z")
_REMOTE = re.compile(r"(tcp|tls|ucx|ws|wss)://[^\s/]+\Z")
_WAIT, _GO, _ABORT, _READY = "wait", "go", "abort", "ready"
_POLL_S = 0.2


@dataclass(frozen=True)
class ClusterAddress:
    """A parsed ``--cluster`` value.

    Attributes
    ----------
    scheduler
        The scheduler's address, or ``None`` for a local cluster.
    local_workers
        Worker processes of a local cluster; ``None`` means one per client.
    """

    scheduler: str | None
    local_workers: int | None = None

    def __str__(self) -> str:
        if self.scheduler:
            return self.scheduler
        return "local" if self.local_workers is None else f"local:{self.local_workers}"


def parse_cluster(text: str) -> ClusterAddress:
    """Parse ``local``, ``local:N`` or a scheduler address such as ``tcp://host:8786``.

    Raises
    ------
    UsageError
        Anything else, or ``local:0``.
    """
    local = _LOCAL.match(text.strip())
    if local:
        workers = int(local.group(1)) if local.group(1) else None
        if workers == 0:
            raise UsageError("--cluster local:N needs at least one worker; use local:1 or more")
        return ClusterAddress(None, workers)
    if _REMOTE.match(text.strip()):
        return ClusterAddress(text.strip())
    raise UsageError(
        f"--cluster {text!r} is not a cluster; use local, local:N or a scheduler address such as tcp://host:8786"
    )


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise UnavailableError("clients on a cluster need Dask distributed; install stratabench[load]") from None
    return distributed


class DaskGate:
    """The start gate of clients running as Dask tasks (see the module docstring)."""

    def __init__(self, name: str, timeout_s: float) -> None:
        self._name = name
        self._timeout_s = timeout_s

    def arrive(self) -> bool:
        distributed = _distributed()
        distributed.Queue(self._name).put(_READY)
        if not distributed.Event(self._name).wait(timeout=self._timeout_s):
            return False
        return bool(distributed.Variable(self._name).get() == _GO)

    def abort(self) -> None:
        distributed = _distributed()
        distributed.Variable(self._name).set(_ABORT)
        distributed.Event(self._name).set()


def _client_task(spec: ClientSpec, gate_name: str) -> ClientReport:
    return run_client(spec, DaskGate(gate_name, spec.gate_timeout_s))


class DaskClients:
    """Runs clients as tasks on a Dask cluster.

    Parameters
    ----------
    address
        From :func:`parse_cluster`.
    clients
        How many clients the runs will have: a ``local`` cluster starts one
        worker process per client.
    connect_timeout_s
        How long a scheduler may take to answer.

    Raises
    ------
    UnavailableError
        Dask is not installed, or the scheduler does not answer (one line,
        before any client starts).
    """

    #: No second survives a ``kill -9`` of the load: a task reports once, through the scheduler, and a worker
    #: of a remote cluster cannot write to this machine's disk (a local cluster stands for a remote one).
    spills = False

    def __init__(self, address: ClusterAddress, *, clients: int, connect_timeout_s: float = 10.0) -> None:
        distributed = _distributed()
        self.address = address
        self._cluster: Any = None
        if address.scheduler is None:
            workers = address.local_workers or clients
            self._cluster = distributed.LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True,
                dashboard_address=None, silence_logs=logging.ERROR,
            )  # fmt: skip
            self._client: Any = distributed.Client(self._cluster, set_as_default=False)
        else:
            try:
                self._client = distributed.Client(
                    address.scheduler, timeout=connect_timeout_s, set_as_default=False
                )
            except (OSError, TimeoutError) as error:
                reason = " ".join(str(error).split()) or type(error).__name__
                raise UnavailableError(
                    f"the Dask scheduler at {address.scheduler} does not answer ({reason}); "
                    "start one with `dask scheduler` or check the --cluster address"
                ) from None
        self.description = f"Dask cluster {address}"

    @property
    def slots(self) -> list[str]:
        """One worker address per worker thread of the cluster."""
        workers = self._client.scheduler_info(n_workers=-1)["workers"]
        return [address for address, info in sorted(workers.items()) for _ in range(int(info.get("nthreads", 1)))]

    def run(self, specs: Sequence[ClientSpec], timeout_s: float) -> list[ClientReport]:
        """Run one task per spec, each on a worker thread of its own; reports in client order."""
        distributed = _distributed()
        slots = self.slots
        if len(specs) > len(slots):
            raise UsageError(
                f"{len(specs)} clients need {len(specs)} worker threads and the cluster {self.address} has "
                f"{len(slots)}; add workers or use fewer --clients"
            )
        name = f"stratabench-load-{uuid.uuid4().hex}"
        ready = distributed.Queue(name, client=self._client)
        decision = distributed.Variable(name, client=self._client)
        start = distributed.Event(name, client=self._client)
        decision.set(_WAIT)
        futures = [
            self._client.submit(
                _client_task, spec, name, key=f"{name}-{spec.index}", workers=[slot],
                allow_other_workers=False, pure=False,
            )  # fmt: skip
            for spec, slot in zip(specs, slots, strict=False)
        ]
        try:
            if self._all_ready(ready, decision, futures, specs[0].gate_timeout_s):
                decision.set(_GO)
            else:
                decision.set(_ABORT)
            start.set()
            deadline = time.monotonic() + timeout_s
            while not all(f.done() for f in futures) and time.monotonic() < deadline:
                time.sleep(_POLL_S)
            return [self._report(spec, future, future.done()) for spec, future in zip(specs, futures, strict=True)]
        finally:
            self._client.cancel(futures, force=True)
            decision.delete()
            ready.close()

    @staticmethod
    def _all_ready(ready: Any, decision: Any, futures: list[Any], timeout_s: float) -> bool:
        """Whether every client arrived; polled, because a blocking ``Queue.get`` that times out logs a traceback."""
        deadline = time.monotonic() + timeout_s
        while ready.qsize() < len(futures):
            if decision.get() == _ABORT or any(f.status in ("error", "cancelled") for f in futures):
                return False
            if time.monotonic() > deadline:
                return False
            time.sleep(_POLL_S)
        return True

    @staticmethod
    def _report(spec: ClientSpec, future: Any, done: bool) -> ClientReport:
        if not done:
            return ClientReport.not_run(
                spec, f"client {spec.index} had not finished after its time was up", host="", pid=0
            )
        if future.status != "finished":
            error = future.exception()
            reason = " ".join(str(error).split()) or type(error).__name__
            return ClientReport.not_run(spec, f"client {spec.index} failed on its worker: {reason}", host="", pid=0)
        report: ClientReport = future.result()
        return report

    def close(self) -> None:
        """Disconnect; a local cluster's worker processes are stopped."""
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()

    def __enter__(self) -> DaskClients:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
