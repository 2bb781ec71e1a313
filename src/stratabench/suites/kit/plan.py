"""The plan of a run: the suites named (or every default one) and their cells."""

from __future__ import annotations

import psutil

from stratabench.engine.runner import Plan, Progress
from stratabench.errors import StratabenchError, UsageError
from stratabench.options import RunOptions
from stratabench.suites import SUITES
from stratabench.suites.kit.suite import Suite
from stratabench.units import format_bytes

__all__ = ["WORKING_COPIES", "check_size_fits", "plan_run", "suite_names"]


def suite_names(options: RunOptions) -> list[str]:
    """The suites to run: those named, else every suite that runs by default."""
    if options.suites:
        for name in options.suites:
            SUITES.info(name)  # unknown names fail before anything runs
        return list(options.suites)
    return [info.name for info in SUITES if getattr(info.cls, "default", True)]


#: Copies of its records a cell's worker may hold at once: the records, their
#: encoded values, the store's copy and the decoded result being verified.
WORKING_COPIES = 4


def check_size_fits(suites: list[Suite], options: RunOptions) -> None:
    """Refuse a ``--size`` whose records would not fit in this machine's available memory.

    Raises
    ------
    UsageError
        With the estimate: records × bytes a record × working copies.
    """
    if options.size is None:
        return
    from stratabench.datasets import DATASETS

    names = {name for suite in suites for name in suite.sized_datasets()}
    if not names:
        return
    per_record = max(DATASETS.get(name).bytes_per_record for name in names)
    needed = options.size * per_record * WORKING_COPIES
    available = psutil.virtual_memory().available
    if needed > available:
        fits = max(1, available // (per_record * WORKING_COPIES))
        raise UsageError(
            f"--size {options.size:,}: the records would need about {format_bytes(needed)} "
            f"({per_record:,} bytes a record of {', '.join(sorted(names))}, {WORKING_COPIES} copies in a worker), "
            f"and {format_bytes(available)} of memory is available; use --size {fits:,} or less"
        )


def plan_run(options: RunOptions, progress: Progress) -> Plan:
    """Build every suite's cells.

    A suite that cannot run here (a missing package) is left out with a
    warning when it was not named; a suite named on the command line, or a
    bad input such as a malformed ``--data`` file, stops the run before any
    measurement, with a one-line error.
    """
    plan = Plan()
    suites: list[Suite] = []
    for name in suite_names(options):
        info = SUITES.info(name)
        if not info.availability.ok and not options.suites:
            progress.warn(f"suite {name} left out: {info.availability.reason}")
            continue
        suites.append(SUITES.get(name)(options))
    check_size_fits(suites, options)  # before any suite generates its records
    for suite in suites:
        name = suite.name
        try:
            cells = suite.cells()
        except StratabenchError as error:
            raise error.with_context(f"suite {name}") from None
        plan.suites.append((suite, cells))
    return plan
