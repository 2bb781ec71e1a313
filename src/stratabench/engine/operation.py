"""What a suite hands the engine for one cell: the operation and its checks.

Plugins never time themselves: a suite builds an :class:`Operation` whose
``call`` is the one thing to measure, and the engine times the loop around
it, traces its memory in a separate pass, and verifies one result outside
every timed region.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stratabench.options import EngineOptions

__all__ = ["CellSpec", "Integrity", "Operation"]


@dataclass(frozen=True)
class CellSpec:
    """One cell of a suite's matrix, cheap to build and JSON-serialisable.

    A cell spec crosses into the worker process as JSON, where the suite
    turns it back into an :class:`Operation` with ``Suite.prepare``.

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
    """

    suite: str
    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    language: str = "python"
    env: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "name": self.name,
            "params": dict(self.params),
            "language": self.language,
            "env": dict(self.env),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CellSpec:
        return cls(
            data["suite"],
            data["name"],
            dict(data.get("params", {})),
            data.get("language", "python"),
            dict(data.get("env", {})),
        )


@dataclass(frozen=True)
class Integrity:
    """The outcome of verifying one result of an operation.

    Attributes
    ----------
    expected
        The dataset's canonical hash.
    actual
        The hash of what the operation returned.
    detail
        On a mismatch, one line naming the first difference (record, field).
    """

    expected: str
    actual: str
    detail: str | None = None

    @property
    def ok(self) -> bool:
        return self.expected == self.actual


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
    notes
        Short facts to keep with the result (``zlib level 6``).
    server_pids
        Process ids of local servers whose CPU to charge to this cell
        (``server_cpu_ns``). Empty when the server is not known.
    before_each
        Called before every loop of ``call``, untimed, for operations that
        need a fresh state (for example re-inserting what ``delete`` removed).
        A cell with ``before_each`` runs one operation per sample loop.
    close
        Called once when the cell is done, to release resources and delete
        what the cell wrote.
    trace_memory
        Whether the tracemalloc pass means something for this operation.
    statement
        For ``timeit``: Python source ``(stmt, setup)`` that the engine
        inlines into its timed loop instead of calling ``call``, as
        :mod:`timeit` and pyperf do, so that a function call's own cost is
        not part of the measurement. ``call`` still runs it once for checks.
    namespace
        Globals for ``statement``.
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
    notes: dict[str, Any] = field(default_factory=dict)
    server_pids: tuple[int, ...] = ()
    before_each: Callable[[], None] | None = None
    close: Callable[[], None] | None = None
    trace_memory: bool = True
    statement: tuple[str, str] | None = None
    namespace: dict[str, Any] = field(default_factory=dict)
    engine: EngineOptions | None = None
