"""Mean seconds per treestore cell: what the study's tables and the commit cores' tables are read from."""

from __future__ import annotations

from collections.abc import Sequence

from stratabench.results.records import CellResult
from stratabench.suites.kit.findings import ResultIndex
from stratabench.systems.treestore.cores import DEFAULT_CORE

__all__ = ["CellMeans"]


class CellMeans:
    """Mean seconds of each (backend, N, test, state, commit core) cell that ran and verified.

    A cell without a ``core`` (measured before there were two) ran on the study's.
    """

    def __init__(self, results: Sequence[CellResult]) -> None:
        self.index = ResultIndex(results, "treestore", ("backend", "n", "test", "state", "core"),
                                 missing={"core": DEFAULT_CORE})

    def cell(self, backend: str, n: int, number: int, state: str, core: str = DEFAULT_CORE) -> CellResult | None:
        """The verified cell of these coordinates, or ``None`` when it did not run or failed."""
        return self.index.find_ok(backend=backend, n=n, test=number, state=state, core=core)

    def mean(self, backend: str, n: int, number: int, state: str = "sysrepo",
             core: str = DEFAULT_CORE) -> float | None:
        """The cell's mean wall time in seconds, or ``None`` when it has none."""
        found = self.cell(backend, n, number, state, core)
        summary = None if found is None else found.summary("wall_ns")
        return None if summary is None else summary.mean / 1e9
