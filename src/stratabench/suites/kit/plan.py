"""The plan of a run: the suites named (or every default one) and their cells."""

from __future__ import annotations

from stratabench.engine.runner import Plan, Progress
from stratabench.errors import StratabenchError
from stratabench.options import RunOptions
from stratabench.suites import SUITES

__all__ = ["plan_run", "suite_names"]


def suite_names(options: RunOptions) -> list[str]:
    """The suites to run: those named, else every suite that runs by default."""
    if options.suites:
        for name in options.suites:
            SUITES.info(name)  # unknown names fail before anything runs
        return list(options.suites)
    return [info.name for info in SUITES if getattr(info.cls, "default", True)]


def plan_run(options: RunOptions, progress: Progress) -> Plan:
    """Build every suite's cells.

    A suite that cannot run here (a missing package) is left out with a
    warning when it was not named; a suite named on the command line, or a
    bad input such as a malformed ``--data`` file, stops the run before any
    measurement, with a one-line error.
    """
    plan = Plan()
    for name in suite_names(options):
        info = SUITES.info(name)
        if not info.availability.ok and not options.suites:
            progress.warn(f"suite {name} left out: {info.availability.reason}")
            continue
        suite = SUITES.get(name)(options)
        try:
            cells = suite.cells()
        except StratabenchError as error:
            raise error.with_context(f"suite {name}") from None
        plan.suites.append((suite, cells))
    return plan
