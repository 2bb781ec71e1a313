"""The ``timeit`` suite: one cell that times a user's Python statement.

It exists so that ``stratabench timeit`` runs exactly the engine that every
suite uses (worker process, calibration, samples, statistics), which is what
lets the engine be checked against pyperf on the same statement. The
statement and its setup come from the settings ``timeit.stmt`` and
``timeit.setup``. It does not run by default.
"""

from __future__ import annotations

from pathlib import Path

from stratabench.engine.operation import CellSpec, Operation
from stratabench.errors import UsageError
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
        stmt = self.config.text("timeit.stmt")
        return [self.spec(stmt, {"stmt": stmt, "setup": self.config.text("timeit.setup")})]

    def prepare(self, cell: CellSpec, workdir: Path) -> Operation:
        stmt, setup = cell.params["stmt"], cell.params["setup"]
        for label, source in (("statement", stmt), ("--setup", setup)):
            try:
                compile(source, f"<{label}>", "exec")
            except SyntaxError as error:
                raise UsageError(f"{label} {source!r} is not valid Python: {error.msg}") from None
        namespace: dict[str, object] = {}
        exec(compile(f"def _once():\n    {setup}\n    {stmt}\n", "<stratabench-timeit>", "exec"), namespace)
        return Operation(call=namespace["_once"], statement=(stmt, setup), trace_memory=False)  # type: ignore[arg-type]
