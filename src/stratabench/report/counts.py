"""The report of a counted run (``--count instructions``): each suite's cells with their counts, and what counts miss.

A study's own tables are built on times, which a counted run does not
take, so a counted run is reported cell by cell (the generic table, whose
columns are the metrics measured: instructions and estimated cycles per
operation, and the operations counted), with the estimate's formula and
what a count cannot see written under every table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stratabench.metrics import metric
from stratabench.report.document import Detail, Report, Section
from stratabench.report.generic import generic_tables
from stratabench.results.records import CellResult

__all__ = ["CANNOT_SEE", "counts_notes", "counts_report"]

#: What a count leaves out, said wherever counts are reported.
CANNOT_SEE = ("Counts see only the instructions this Python process executes: not time spent waiting (I/O, "
              "sleeps, locks), not work in a server process (a database's, a cache's), not Go cells (separate "
              "programs, never counted); and an instruction is not a nanosecond (a cache miss costs a hundred).")


def counts_notes() -> list[str]:
    """The lines under every table of counts: how they were taken, the cycle estimate's formula, what they miss."""
    return [
        "instructions: per operation, under Valgrind's callgrind with ASLR off and PYTHONHASHSEED=0 in a cleaned "
        "environment; the count of N operations subtracted from that of 2N in the same process, so start-up, "
        "set-up and the loop's own cost cancel; loops: N.",
        f"est cycles: {metric('est_cycles').description}.",
        CANNOT_SEE,
    ]


def counts_report(results: Sequence[CellResult], header: Mapping[str, Any], detail: Detail = "tables") -> Report:
    """The report of a counted run: provenance, then one table of counts per suite."""
    report = Report(header, detail="tables" if detail == "summary" else detail, results=list(results))
    for table in generic_tables(results):
        table.title = table.title.replace("(medians)", "(counted per operation)")
        table.notes = [*counts_notes(), "status: empty when the cell was counted and returned the expected data."]
        suite = table.title.partition(":")[0]
        report.sections.append(Section(suite, None, [table]))
    return report
