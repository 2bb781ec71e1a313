"""Requests to a store: reads and updates of the client's own keys, every read checked.

:class:`StoreRequestPlan` is the picklable part of a client's spec; in the
client's process it opens a :class:`StoreRequests`, which

- opens the store (``server_pids=()``: a client measures latency, not the
  server's CPU) inside the run's namespace,
- puts version 0 of each key the client owns, in batches where the store
  has them (untimed),
- then, per request, follows its :func:`~stratabench.load.workload.plan_operations`
  cycle: a read (``get``) is compared with the exact bytes the key must hold;
  an update (``put``) writes the key's next version
  (:mod:`stratabench.load.integrity`).

Each client owns a disjoint range of keys, so it always knows what its keys
hold; clients never write each other's keys, which also means this measures
no write contention on one key.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stratabench.layers.stores import open_store, store_for_scheme
from stratabench.layers.stores.base import BatchStore, Store, parse_store_url
from stratabench.load.integrity import CheckFailures, KeyLedger
from stratabench.load.workload import PLAN_LENGTH, OperationPlan, plan_operations, workload
from stratabench.options import RunOptions

__all__ = ["StoreRequestPlan", "StoreRequests", "key_name", "store_libraries"]

_LOAD_BATCH = 500


def key_name(number: int) -> bytes:
    """The store key of key number ``number`` (YCSB's ``user…`` style)."""
    return b"user%012d" % number


def store_libraries(store_url: str) -> tuple[str, ...]:
    """The module of the store plugin that opens ``store_url``, and the driver modules it requires."""
    from stratabench.layers.stores import STORES

    info = STORES.info(store_for_scheme(parse_store_url(store_url).scheme))
    return (info.cls.__module__, *info.requires)


@dataclass(frozen=True)
class StoreRequestPlan:
    """One client's store requests: the store, the workload, and the client's own keys.

    Each client gets a plan of its own, so that a client receives only its
    own payloads, not every client's.

    Attributes
    ----------
    store_url, namespace, options
        The store, the run's namespace in it, and the run options (for store settings).
    workload
        A :data:`~stratabench.load.workload.WORKLOADS` name.
    first_key, payloads
        The client owns keys ``first_key`` onwards, one per payload.
    seed
        Seeds the client's request plan (mixed with the client's number).
    """

    store_url: str
    namespace: str
    workload: str
    first_key: int
    payloads: tuple[bytes, ...]
    seed: int = 1
    options: RunOptions | None = field(default=None, compare=False)

    @property
    def preload(self) -> tuple[str, ...]:
        """The store plugin's module and its driver (``redis`` takes seconds to import)."""
        return store_libraries(self.store_url)

    def operations(self, index: int) -> OperationPlan:
        """The request plan of client ``index``: the same for a Python and a Go client."""
        return plan_operations(workload(self.workload), len(self.payloads), self.seed * 1_000_003 + index)

    def open(self, index: int) -> StoreRequests:
        store = open_store(self.store_url, namespace=self.namespace, options=self.options, server_pids=())
        return StoreRequests(store, self.first_key, self.payloads, self.operations(index))


class StoreRequests:
    """One client's requests to its store (see the module docstring)."""

    def __init__(self, store: Store, first_key: int, payloads: tuple[bytes, ...], plan: OperationPlan) -> None:
        self.store = store
        self.ledger = KeyLedger(list(range(first_key, first_key + len(payloads))), list(payloads))
        self.keys = [key_name(n) for n in self.ledger.numbers]
        self._reads, self._keys = plan.reads, plan.keys
        self._step = 0
        self._failures = CheckFailures()

    @property
    def check_failures(self) -> CheckFailures:
        return self._failures

    def prepare(self) -> None:
        """Put version 0 of every key the client owns."""
        items = list(zip(self.keys, self.ledger.expected, strict=True))
        if isinstance(self.store, BatchStore):
            for start in range(0, len(items), _LOAD_BATCH):
                self.store.put_many(items[start : start + _LOAD_BATCH])
        else:
            for key, value in items:
                self.store.put(key, value)

    def send(self) -> str:
        step = self._step & (PLAN_LENGTH - 1)
        self._step += 1
        index = self._keys[step]
        key = self.keys[index]
        if self._reads[step]:
            reason = self.ledger.check(index, self.store.get(key))
            if reason is not None:
                self._failures.add(key, reason)
            return "read"
        value = self.ledger.next_value(index)
        try:
            self.store.put(key, value)
        except BaseException:
            self.ledger.written(index, value, certain=False)
            raise
        self.ledger.written(index, value, certain=True)
        return "update"

    def close(self) -> None:
        self.store.close()
