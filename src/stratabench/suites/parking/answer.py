"""The parking answer: what the ORM costs, per call and per suite run, and what logging costs each server.

The study asks how much an ORM costs an OLTP service. The answer compares
``python-orm`` with the two servers that do the same work without it
(``python-core``, the same language with SQL by hand; ``go-sql``, compiled
SQL by hand) on server CPU, client time and statements sent, per suite run
and per call, with the paired ratio's interval
(:func:`~stratabench.report.paired.paired_ratio`); then, per server, what
turning logging on costs it. Every comparison holds all but one thing fixed:
the ORM rows compare servers with logging off on one database, the logging
rows one server on one database with logging on and off; no row ranks two
cells that differ in both server and logging.

Statements are exact counts, so they need no interval; times from fewer runs
than a 95% interval needs are *too few to judge*, with the setting to run.
"""

from __future__ import annotations

from collections.abc import Sequence

from stratabench.options import RunOptions
from stratabench.report.answer import Answer, Pick
from stratabench.report.paired import paired_ratio
from stratabench.results.records import CellResult
from stratabench.suites.kit.reports import study_answer
from stratabench.suites.parking.process import IMPLEMENTATIONS
from stratabench.suites.parking.report import ParkingResults, sureness
from stratabench.systems.parking.statements import KINDS
from stratabench.units import format_ns, format_ratio

__all__ = ["parking_answer"]

ORM = "python-orm"
WITHOUT_ORM = ("python-core", "go-sql")
_MEASURES = (("server_cpu_ns", "server CPU"), ("wall_ns", "client time"))


def _calls(cell: CellResult) -> float | None:
    calls = cell.notes.get("calls") or {}
    return float(sum(calls.values())) or None


def _statements(cell: CellResult) -> float | None:
    sent = cell.notes.get("statements")
    return None if not sent else float(sum(sent.get(kind, 0) for kind in KINDS if kind not in ("COMMIT", "ROLLBACK")))


def _cost(orm: CellResult, other: CellResult, metric: str, label: str, setting: str) -> Pick | None:
    measured = paired_ratio(orm, other, metric)
    a, b = orm.median(metric), other.median(metric)
    if measured is None or a is None or b is None:
        return None
    calls = _calls(orm)
    per_call = "" if calls is None else f", {_signed(a - b, calls)} a call"
    return Pick(f"{label}, {setting}", f"{ORM} costs", f"{format_ratio(measured.value)} {measured.interval}: "
                f"{_signed(a - b)} a suite run{per_call}", other.params["server"], sureness(measured), measured,
                ((orm, other),))


def _signed(difference_ns: float, calls: float = 1.0) -> str:
    value = difference_ns / calls
    return ("+" if value >= 0 else "-") + format_ns(abs(value))


@study_answer("parking")
def parking_answer(results: Sequence[CellResult], options: RunOptions) -> Answer | None:
    """The ORM's cost against SQL by hand (Python and Go), per run and per call; logging's cost per server."""
    view = ParkingResults(results)
    if view.database is None:
        return None
    database = view.database
    found = Answer("parking", f"what the ORM costs an OLTP service, per call and per suite run ({database})")
    orm = view.get(ORM)
    for other_name in WITHOUT_ORM:
        other = view.get(other_name)
        if orm is None or other is None:
            found.lines.append(f"not measured: {view.why_missing(ORM if orm is None else other_name)}")
            continue
        for metric, label in _MEASURES:
            pick = _cost(orm, other, metric, label, "logging off")
            if pick is not None:
                found.picks.append(pick)
        mine, theirs = _statements(orm), _statements(other)
        if mine is not None and theirs is not None:
            calls = _calls(orm)
            extra = "" if calls is None else f", {(mine - theirs) / calls:+.2f} a call"
            found.picks.append(Pick("statements per suite run, logging off", f"{ORM} sends",
                                    f"{mine:g} against {theirs:g} ({mine - theirs:+g} a run{extra})", other_name,
                                    "exact count", None, ((orm, other),)))
    for server in IMPLEMENTATIONS:
        on, off = view.get(server, "on"), view.get(server, "off")
        if on is None or off is None:
            continue
        for metric, label in _MEASURES:
            measured = paired_ratio(on, off, metric)
            a, b = on.median(metric), off.median(metric)
            if measured is None or a is None or b is None:
                continue
            found.picks.append(Pick(f"{label} of {server}, logging on", "logging costs",
                                    f"{(measured.value - 1):+.0%} {measured.interval}: {_signed(a - b)} a suite run",
                                    "logging off", sureness(measured), measured, ((on, off),)))
    if not found.picks:
        return None
    found.summary = _summary(found.picks)
    found.lines.append(f"Every row compares cells that differ in one thing only, on {database}: the server (with "
                       "logging off), or the logging (of one server). Ratios are the ORM's (or logging on's) over "
                       "the other's, with their interval.")
    return found


def _summary(picks: Sequence[Pick]) -> list[str]:
    """A sentence for the ORM's server CPU cost and one for logging, in the reader's words."""
    lines = []
    cpu = [p for p in picks if p.setting.startswith("server CPU, ") and p.ratio is not None]
    if cpu:
        parts = [f"{format_ratio(p.ratio.value)} the server CPU of {p.against} ({p.sure.split(':')[0]})"
                 for p in cpu if p.ratio is not None]
        lines.append(f"The ORM costs: {ORM} uses " + " and ".join(parts) + ".")
    logging = [p for p in picks if p.setting.startswith("server CPU of ") and p.ratio is not None]
    if logging:
        parts = [f"{p.setting.removeprefix('server CPU of ').removesuffix(', logging on')} "
                 f"{(p.ratio.value - 1):+.0%} ({p.sure.split(':')[0]})" for p in logging if p.ratio is not None]
        lines.append("Logging costs each server's CPU: " + ", ".join(parts) + ".")
    few = next((p.sure for p in picks if p.sure.startswith("too few")), None)
    if few is not None:
        lines.append(few.replace("too few to judge: ", "").capitalize().replace(";", ": too few to judge;", 1) + ".")
    return lines
