"""The ``timeit`` suite: one cell that times a user's Python statement.

It exists so that ``stratabench timeit`` runs exactly the engine that every
suite uses (worker process, calibration, samples, statistics), which is what
lets the engine be checked against pyperf on the same statement. The
statement and its setup come from the settings ``timeit.stmt`` and
``timeit.setup``; either may have several lines (see
:mod:`stratabench.engine.statement`). It does not run by default.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from stratabench.engine.operation import CellSpec, Operation
from stratabench.engine.statement import compile_statement, one_line
from stratabench.settings import Setting
from stratabench.suites import SUITES
from stratabench.suites.kit.suite import Suite

__all__ = ["TimeitSuite"]


@SUITES.register("timeit")
class TimeitSuite(Suite):
    """Time one Python statement (stratabench timeit)."""

    default = False
    settings = (
        Setting("timeit.stmt", "pass", "the Python statement to time"),
        Setting("timeit.setup", "pass", "Python run before each timed loop, untimed"),
    )

    def cells(self) -> list[CellSpec]:
        stmt, setup = self.config.text("timeit.stmt"), self.config.text("timeit.setup")
        return [self.spec(one_line(stmt), {"stmt": stmt, "setup": setup})]

    def prepare(self, cell: CellSpec, workdir: Path) -> Operation:
        stmt, setup = cell.params["stmt"], cell.params["setup"]
        # Compiled here too, so a syntax error fails the cell before the engine starts.
        once = partial(compile_statement(stmt, setup).loop_timer({}), 1)
        return Operation(call=once, statement=(stmt, setup), trace_memory=False)
