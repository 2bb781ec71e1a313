"""Cells of known cost for benchmarks/ab_targets.py: a pure-Python loop, with a known share of work added.

``work`` iterations of a loop whose every iteration costs the same (no
object is allocated), times ``1 + extra``: real work, which both a clock and
an instruction count see (a sleep would hide from a count).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stratabench.engine.operation import CellSpec, Operation


class WorkProbe:
    """A cell factory (``ab_probe:WorkProbe``): params ``work`` (iterations) and ``extra`` (a fraction added)."""

    def __init__(self, options: Any) -> None:
        self.options = options

    def prepare(self, cell: CellSpec, workdir: Path) -> Operation:
        items = [1] * round(int(cell.params["work"]) * (1 + float(cell.params.get("extra", 0.0))))

        def call() -> int:
            total = 0
            for value in items:
                total ^= value
            return total

        return Operation(call=call, trace_memory=False)
