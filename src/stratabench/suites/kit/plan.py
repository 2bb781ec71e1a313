"""The plan of a run: the suites named (or every default one) and their cells."""

from __future__ import annotations

import json
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import psutil

from stratabench.engine.operation import CellSpec
from stratabench.engine.runner import Plan, Progress
from stratabench.errors import StratabenchError, UsageError
from stratabench.options import RunOptions
from stratabench.suites import SUITES
from stratabench.suites.kit.suite import Suite
from stratabench.units import format_bytes

__all__ = ["WORKING_COPIES", "CellKey", "cell_key", "check_size_fits", "describe_plan", "estimate_seconds", "plan_run",
           "previous_durations", "store_drivers", "suite_names"]


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
    plan.preload = store_drivers(options)
    return plan


def store_drivers(options: RunOptions) -> tuple[str, ...]:
    """The store plugins of the run's ``--store`` URLs and their drivers: what its zygotes import besides the suites.

    A suite's zygote imports the drivers of the stores that need a server
    only when the run names such a store (:meth:`Suite.preload` says why).
    """
    from stratabench.layers.stores import STORES, store_for_scheme
    from stratabench.layers.stores.base import parse_store_url

    modules: list[str] = []
    for url in options.stores:
        info = STORES.info(store_for_scheme(parse_store_url(url).scheme))
        modules += [info.cls.__module__, *info.requires]
    return tuple(dict.fromkeys(modules))


#: A Python cell's fixed cost besides its samples: the worker's start, imports, calibration, the memory pass.
CELL_OVERHEAD_S = 0.8
#: An external (Go) cell without a previous duration: its share of the adapter's build and run.
EXTERNAL_CELL_S = 2.0


CellKey = tuple[str, str, str]
"""A cell as a previous run knows it: suite, name and parameters (another ``--size`` is another cell)."""


def cell_key(suite: str, name: str, params: Mapping[str, Any]) -> CellKey:
    return (suite, name, json.dumps(params, sort_keys=True, default=str))


#: Results files larger than this are not read for an estimate: reading them would delay the run.
_ESTIMATE_MAX_BYTES = 32_000_000


def previous_durations(directory: Path, newest: int = 5) -> dict[CellKey, float]:
    """Each cell's duration in the newest results files of ``directory`` (the newest file wins)."""
    from stratabench.results.format import load

    found: list[tuple[float, Path]] = []
    try:
        for path in directory.glob("*.jsonl"):
            try:
                status = path.stat()
            except OSError:
                continue  # a broken link, or gone since it was listed
            # Only regular files of a bounded size: a FIFO would block the run before its first cell.
            if stat.S_ISREG(status.st_mode) and status.st_size <= _ESTIMATE_MAX_BYTES:
                found.append((status.st_mtime, path))
    except OSError:
        return {}
    durations: dict[CellKey, float] = {}
    for _, path in sorted(found)[-newest:]:
        try:
            results = load(path)
        except Exception:  # noqa: BLE001 -- any unreadable old file only makes the estimate rougher; never stops a run
            continue
        for cell in results.cells:
            if cell.duration_s:
                durations[cell_key(cell.suite, cell.cell, cell.params)] = cell.duration_s
    return durations


def estimate_seconds(cell: CellSpec, options: RunOptions, previous: Mapping[CellKey, float]) -> float:
    """How long one cell should take: its previous duration, else from the sampling options.

    The fallback is an upper bound for suites that sample for less than
    ``--min-time``: warm-ups and samples at ``--min-time`` each, two more
    for calibration, and :data:`CELL_OVERHEAD_S`.
    """
    known = previous.get(cell_key(cell.suite, cell.name, cell.params))
    if known is not None:
        return known
    if cell.language != "python":
        return EXTERNAL_CELL_S
    engine = options.engine
    # Adaptive sampling stops at its floor when the cell is stable, which most are; a noisy cell
    # spends up to its budget, so the estimate is a lower bound there.
    samples = engine.samples if engine.samples is not None else engine.min_samples
    sampling = (samples + engine.warmups + 2) * engine.min_sample_ns / 1e9
    return CELL_OVERHEAD_S + sampling


def describe_plan(plan: Plan, estimates: Mapping[tuple[str, str], float], measured: int) -> str:
    """``measuring 309 cells in 4 suites (bulkload 40, …): about 6 min (from …)``."""
    counts = ", ".join(f"{cells[0].suite} {len(cells)}" for _, cells in plan.suites if cells)
    suites = "1 suite" if len(plan.suites) == 1 else f"{len(plan.suites)} suites"
    total = sum(estimates.values())
    minutes = f"about {total / 60:.0f} min" if total >= 90 else f"about {max(1, round(total)):.0f} s"
    basis = (f"{measured} of {plan.total} cells from a previous run's durations" if measured
             else "from --samples and --min-time; no previous run to go by")
    cells = "1 cell" if plan.total == 1 else f"{plan.total} cells"
    return f"plan: {cells} in {suites} ({counts}); {minutes} ({basis})"
