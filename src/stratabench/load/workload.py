"""Workloads: which operations a client sends, on which keys, in what proportion.

Five, after YCSB's core workloads (``workloads/workload[abc]`` in
brianfrankcooper/YCSB), over the store contract's ``get`` and ``put``:

=========  ==========================  ===============
name       operations                  key choice
=========  ==========================  ===============
``get``    reads only                  uniform
``put``    updates only                uniform
``a``      50% reads, 50% updates      zipfian (0.99)
``b``      95% reads, 5% updates       zipfian (0.99)
``c``      reads only                  zipfian (0.99)
=========  ==========================  ===============

The zipfian choice is YCSB's: a key's popularity falls as ``1/rank**0.99``,
and ranks are scattered over the keys (YCSB's "scrambled" zipfian) so that
the popular keys are not the first ones loaded.

Each client draws its operations from a plan of its own, seeded by the run
seed and the client's number: the same arguments give the same requests on
every machine. The plan is a fixed cycle of :data:`PLAN_LENGTH` steps drawn
once before the clock starts, so choosing the next request costs an index,
not a random draw.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from stratabench.errors import UnknownNameError

__all__ = ["PLAN_LENGTH", "WORKLOADS", "OperationPlan", "Workload", "plan_operations", "workload"]

PLAN_LENGTH = 1 << 16
"""Steps in one cycle of a client's plan (a power of two, so the cycle is a mask)."""

ZIPFIAN_CONSTANT = 0.99
"""YCSB's default ``zipfian`` skew."""


@dataclass(frozen=True)
class Workload:
    """A mix of reads and updates and how keys are chosen.

    Attributes
    ----------
    name
        How ``--workload`` names it.
    read_fraction
        Share of requests that are reads (``get``); the rest are updates (``put``).
    distribution
        ``uniform`` or ``zipfian`` (see the module docstring).
    description
        One line for help texts and reports.
    """

    name: str
    read_fraction: float
    distribution: Literal["uniform", "zipfian"]
    description: str


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload("get", 1.0, "uniform", "reads only, keys chosen uniformly"),
        Workload("put", 0.0, "uniform", "updates only, keys chosen uniformly"),
        Workload("a", 0.5, "zipfian", "YCSB A: 50% reads, 50% updates, zipfian keys"),
        Workload("b", 0.95, "zipfian", "YCSB B: 95% reads, 5% updates, zipfian keys"),
        Workload("c", 1.0, "zipfian", "YCSB C: reads only, zipfian keys"),
    )
}


def workload(name: str) -> Workload:
    """The workload called ``name``.

    Raises
    ------
    UnknownNameError
        Listing the known workloads.
    """
    try:
        return WORKLOADS[name.lower()]
    except KeyError:
        raise UnknownNameError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}") from None


@dataclass(frozen=True)
class OperationPlan:
    """One cycle of a client's requests: step ``i`` reads (or updates) key ``keys[i]``.

    Attributes
    ----------
    reads
        ``True`` for a read, ``False`` for an update, one per step.
    keys
        Index of the key each step touches, within the client's own keys.
    """

    reads: list[bool]
    keys: list[int]


def plan_operations(work: Workload, key_count: int, seed: int) -> OperationPlan:
    """Draw one :data:`PLAN_LENGTH`-step cycle of requests over ``key_count`` keys.

    Parameters
    ----------
    work
        The workload.
    key_count
        How many keys the client owns (at least one).
    seed
        Seeds the draw; a client passes the run seed mixed with its number.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    reads = rng.random(PLAN_LENGTH) < work.read_fraction
    if work.distribution == "uniform":
        keys = rng.integers(0, key_count, PLAN_LENGTH)
    else:
        weights = 1.0 / np.arange(1, key_count + 1, dtype=np.float64) ** ZIPFIAN_CONSTANT
        ranks = rng.choice(key_count, PLAN_LENGTH, p=weights / weights.sum())
        keys = rng.permutation(key_count)[ranks]
    return OperationPlan(reads=[bool(r) for r in reads.tolist()], keys=[int(k) for k in keys.tolist()])
