"""The suite base class: a study as a matrix of cells run by one engine."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from stratabench.engine.operation import CellSpec, Operation

if TYPE_CHECKING:
    from stratabench.options import RunOptions
    from stratabench.report.table import Table
    from stratabench.results.records import CellResult

__all__ = ["Suite"]


class Suite(ABC):
    """A study: it lists its cells, builds their operations, shapes its tables.

    Subclasses are registered with ``@SUITES.register("name")`` in a module of
    ``stratabench.suites``. Everything a suite needs comes from
    :class:`~stratabench.options.RunOptions`, which crosses into worker
    processes as JSON, so ``prepare`` can rebuild any cell from its spec.
    """

    name: ClassVar[str]
    #: Whether ``stratabench run`` with no suite named includes this suite.
    default: ClassVar[bool] = True

    def __init__(self, options: RunOptions) -> None:
        self.options = options

    @abstractmethod
    def cells(self) -> list[CellSpec]:
        """Every cell of the matrix for these options; cheap, builds no data."""

    @abstractmethod
    def prepare(self, cell: CellSpec, workdir: Path) -> Operation:
        """Build the operation of one Python cell (runs in the worker).

        ``workdir`` is an empty directory of the cell's own, removed after.
        Raise a :class:`~stratabench.errors.StratabenchError` (for example
        ``UnavailableError``) to fail the cell with a one-line reason.
        """

    def run_external(self, cells: Sequence[CellSpec], workdir: Path) -> Iterator[CellResult]:
        """Measure cells whose ``language`` is not Python, yielding each result.

        The default has no external cells; suites with a Go adapter override it.
        """
        return iter(())

    def tables(self, results: Sequence[CellResult], header: dict[str, Any]) -> list[Table]:
        """The report tables of this suite, shaped like its study's.

        The default is the generic table of every cell and metric.
        """
        from stratabench.report.generic import generic_tables

        return generic_tables(results)
