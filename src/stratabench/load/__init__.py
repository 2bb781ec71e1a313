"""The load engine: many clients at once, latency without coordinated omission, clients beyond one machine.

Beside the single-operation engine (``engine/``), this one asks how a store
holds under concurrent clients: throughput, tail latency, where the knee
is, and whether anything was lost. It is generic: a configuration is a store
URL, a workload, payloads, clients and a rate; no study is named here.

- :mod:`.workload`: get, put and YCSB-like mixes A, B, C.
- :mod:`.integrity`: per-key version stamps, checked on every read.
- :mod:`.client`: one client's life (load, start gate, closed or open loop, report).
- :mod:`.processes`, :mod:`.cluster`: clients as local processes, or as Dask tasks;
  :mod:`.go_clients`: clients written in Go, as processes of ``stratabench-go load``.
- :mod:`.histogram`: HDR histograms, recorded in bulk, encoded, merged exactly.
- :mod:`.run`: one configuration, merged and diagnosed; :mod:`.sweep`: the rate sweep and its knee.
- :mod:`.records`, :mod:`.cells`: payloads in, result records out.

Another kind of client (a driver of a service, say) plugs in at
:func:`.client.run_client`'s request step: a subclass of :class:`.run.Pacing`
names its :class:`.client.RequestPlan` per client, and the gate, the loops,
the histograms, the runners (:func:`.run.run_clients`) and the merge do not
depend on what a request is.
"""

from __future__ import annotations

from stratabench.load.cells import load_cell
from stratabench.load.cluster import DaskClients, parse_cluster
from stratabench.load.go_clients import GoProcesses
from stratabench.load.processes import LocalProcesses
from stratabench.load.records import generated_payloads, payloads_from_rows
from stratabench.load.run import CLIENT_LANGS, LoadResult, LoadSpec, Pacing, merge_reports, run_clients, run_load
from stratabench.load.sweep import SweepLimits, SweepResult, default_rates, sweep
from stratabench.load.workload import WORKLOADS

__all__ = [
    "CLIENT_LANGS",
    "WORKLOADS",
    "DaskClients",
    "GoProcesses",
    "LoadResult",
    "LoadSpec",
    "LocalProcesses",
    "Pacing",
    "SweepLimits",
    "SweepResult",
    "default_rates",
    "generated_payloads",
    "load_cell",
    "merge_reports",
    "parse_cluster",
    "payloads_from_rows",
    "run_clients",
    "run_load",
    "sweep",
]
