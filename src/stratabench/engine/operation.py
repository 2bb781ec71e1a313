"""What a suite hands the engine for one cell: the operation and its checks.

Plugins never time themselves: a suite builds an :class:`Operation` whose
``call`` is the one thing to measure, and the engine times the loop around
it, traces its memory in a separate pass, and verifies one result outside
every timed region.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from stratabench.datasets.verify import Integrity
from stratabench.results.records import CPU_METRIC, WALL_METRIC

from stratabench.errors import UsageError

if TYPE_CHECKING:
    from stratabench.options import EngineOptions, RunOptions

__all__ = ["CellSpec", "Operation", "OperationBuilder", "PairedBound", "builder_of"]


@dataclass(frozen=True)
class PairedBound:
    """A verdict on the cell carrying it divided by another cell of its suite: is the ratio beyond ``bound``?

    The verdict is decided when the paired ratio's interval
    (:func:`~stratabench.results.records.paired_ratio_of`, as the report
    computes it) lies wholly on one side of ``bound``; the engine gives an
    undecided pair more rounds (:mod:`stratabench.engine.rounds`).

    Attributes
    ----------
    denominator
        The other cell's name (:attr:`CellSpec.name`); a cell not in the run leaves the bound unused.
    bound
        The ratio the verdict holds the two to (1.25: at most a quarter slower, say).
    metric
        The metric divided; ``None``: the one both cells are judged on, as a report's ratio.
    """

    denominator: str
    bound: float
    metric: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"denominator": self.denominator, "bound": self.bound, "metric": self.metric}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PairedBound:
        return cls(data["denominator"], float(data["bound"]), data.get("metric"))


@dataclass(frozen=True)
class CellSpec:
    """One cell of a suite's matrix, cheap to build and JSON-serialisable.

    A cell spec crosses into the worker process as JSON, where its
    ``factory`` turns it back into an :class:`Operation`.

    Attributes
    ----------
    suite
        The registered suite name.
    name
        Unique within the suite, readable: ``msgspec.msgpack/typed``.
    params
        The cell's coordinates in the matrix (codec, mode, store, size...):
        JSON scalars only. Reports group and label rows by them.
    language
        ``python`` cells run in the engine; any other value marks a cell
        measured by an external adapter (``Suite.run_external``).
    env
        Environment variables the cell's worker process needs, set before
        anything is imported (for example a protobuf backend switch). Such a
        cell cannot run in-process.
    factory
        How to build the cell's operation, as an importable reference
        ``module:name``: ``name`` is called with the run options and returns
        an :class:`OperationBuilder`. The engine imports it in the worker, so
        it never names a suite; a suite sets it to its own class.
    group
        Cells that a report compares with each other (a codec and json, a
        store and the database, the two sides of a verdict) share a group:
        in every round the engine measures a group's cells back to back, in
        ABBA order (:mod:`stratabench.engine.rounds`), so a ratio between
        two of them is paired
        (:func:`~stratabench.results.records.paired_ratio_of`). ``None``: a
        cell of its own, placed anywhere in the round.
    min_rounds
        Rounds this cell takes at the least in adaptive sampling, above the
        run's floor (``None``: the floor). A suite gives
        :data:`~stratabench.engine.sampling.ROBUST_ROUNDS` to the cells a
        verdict divides, so one disturbed round cannot decide it.
    bounds
        Verdicts on this cell divided by another (:class:`PairedBound`):
        while one's paired ratio straddles its bound at the end of the
        floor, both cells take more rounds (:mod:`stratabench.engine.rounds`),
        so that the verdict is decided rather than too close to call.
    """

    suite: str
    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    language: str = "python"
    env: Mapping[str, str] = field(default_factory=dict)
    factory: str = ""
    group: str | None = None
    min_rounds: int | None = None
    bounds: tuple[PairedBound, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "name": self.name,
            "params": dict(self.params),
            "language": self.language,
            "env": dict(self.env),
            "factory": self.factory,
            "group": self.group,
            "min_rounds": self.min_rounds,
            "bounds": [bound.to_json() for bound in self.bounds],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CellSpec:
        return cls(
            data["suite"],
            data["name"],
            dict(data.get("params", {})),
            data.get("language", "python"),
            dict(data.get("env", {})),
            data.get("factory", ""),
            data.get("group"),
            data.get("min_rounds"),
            tuple(PairedBound.from_json(bound) for bound in data.get("bounds", ())),
        )


@dataclass
class Operation:
    """One measurable operation, built by a suite inside the worker.

    Attributes
    ----------
    call
        The operation. Called many times in calibrated loops; its return
        value is the operation's result (kept alive for memory metrics).
    verify
        Called once, outside timing, on one result of ``call``; returns the
        integrity outcome. ``None`` only for cells with nothing to verify.
    size_bytes
        Encoded or stored size of what the operation reads or writes.
    extra
        Single-valued extra metrics (names from ``stratabench.metrics``),
        for example an embed cell's compile time.
    extra_of
        More single-valued extra metrics that take time to get (sizes after
        compression, a read's stages timed apart): called once, after the
        samples, and only in a cell's first round, since later rounds keep
        only their timings; a fresh worker each round would pay it again.
    notes
        Short facts to keep with the result (``zlib level 6``).
    server_pids
        Process ids of local servers whose CPU to charge to this cell
        (``server_cpu_ns``). Empty when the server is not known.
    before_each
        Called before every loop of ``call``, untimed, for operations that
        need a fresh state (for example re-inserting what ``delete`` removed).
        A cell with ``before_each`` runs one operation per sample loop.
    before_sample
        Called before every timed sample (each retake of one too), untimed,
        after ``before_each``: a store's periodic upkeep, done between
        samples so that none falls inside one (SQLite's WAL checkpoint, which
        a commit runs every so many writes: where it fell depended on the
        calibrated loop count, and a write of the cache study read 184 or
        248 µs as it did; docs/studies/cache.md §4). Unlike ``before_each``
        it leaves the sample's loop as calibrated.
    close
        Called once when the cell is done, to release resources and delete
        what the cell wrote.
    trace_memory
        Whether the tracemalloc pass means something for this operation.
    memory_in_child
        Run the memory pass in a short-lived child forked from the worker,
        which reports its figures through a pipe and exits, so the worker
        that then samples never ran tracemalloc: the pass leaves the
        allocators (glibc's dynamic mmap threshold, Python's small-object
        arenas) in another state for the rest of the process, and a cell's
        first round timed 5-35% faster than its later rounds. Opt-in: an
        operation that holds a connection or a thread cannot be shared
        with a fork; one that reads or encodes what lives in the worker can.
    statement
        For ``timeit``: Python source ``(stmt, setup)`` that the engine
        inlines into its timed loop instead of calling ``call``, as
        :mod:`timeit` and pyperf do, so that a function call's own cost is
        not part of the measurement. ``call`` still runs it once for checks.
    namespace
        Globals for ``statement``.
    waits
        The operation waits on something outside its thread (a file's
        system calls, a server, another process): it is judged on wall
        time, since its CPU time would leave out what it is measured for.
        ``False``: the work is in the thread, and it is judged on the
        thread's CPU time, which leaves out the time a shared host took the
        CPU away (:data:`~stratabench.results.records.CPU_METRIC`). An
        operation with ``server_pids`` waits whatever this says.
    engine
        Measurement options for this operation in place of the run's, for
        suites whose cells are many and cheap (a lower calibration target);
        ``None`` keeps the run's. A suite derives them from the run's
        options, so that ``--samples`` and ``--warmups`` still hold.
    """

    call: Callable[[], object]
    verify: Callable[[object], Integrity] | None = None
    size_bytes: int | None = None
    extra: dict[str, float] = field(default_factory=dict)
    extra_of: Callable[[], dict[str, float]] | None = None
    notes: dict[str, Any] = field(default_factory=dict)
    server_pids: tuple[int, ...] = ()
    before_each: Callable[[], None] | None = None
    before_sample: Callable[[], None] | None = None
    close: Callable[[], None] | None = None
    trace_memory: bool = True
    memory_in_child: bool = False
    statement: tuple[str, str] | None = None
    namespace: dict[str, Any] = field(default_factory=dict)
    waits: bool = False
    engine: EngineOptions | None = None

    @property
    def judged_metric(self) -> str:
        """The metric the cell is judged on: wall time if it waits, else the thread's CPU time."""
        return WALL_METRIC if self.waits or self.server_pids else CPU_METRIC


class OperationBuilder(Protocol):
    """What a cell's ``factory`` returns: it builds the operation of one cell (in the worker)."""

    def prepare(self, cell: CellSpec, workdir: Path) -> Operation: ...


def builder_of(spec: CellSpec, options: RunOptions) -> OperationBuilder:
    """Import the cell's ``factory`` and call it with the run's options.

    Raises
    ------
    UsageError
        When the cell names no factory, or one that cannot be imported.
    """
    module, _, name = spec.factory.partition(":")
    if not module or not name:
        raise UsageError(f"cell {spec.name!r} of {spec.suite} names no operation factory (module:name)")
    try:
        factory = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as error:
        raise UsageError(f"cell {spec.name!r}: cannot import its factory {spec.factory}: {error}") from None
    builder: OperationBuilder = factory(options)
    return builder
