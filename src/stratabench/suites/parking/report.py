"""The parking study's tables: the study's Tables 1–4 beside ours, every configuration, code size, verdicts.

1. **Table 1**: calls per suite run and each function's share of the run's
   time, the study's (YB.ORM+SOCI, logging on) beside ours.
2. **Table 2**: SQL statements per suite run by kind, the study's two
   servers beside our four (the server's own count; on SQLite the FOR
   UPDATE clause is dropped by the dialects, so locked reads show as SELECT).
3. **Table 3**: the log after 100 suite runs (logging on).
4. **Table 4**: the improvement from turning logging off, in %.
5. **Configurations**: client s/run, server CPU s/run, DB CPU s/run,
   statements and log per run, runs failed.
6. **Code size** of each server: its own logic, its model, what it shares.
7. **Conclusions** of the study, judged; **targets** of issue 12.

Tables 1–4 and the verdicts use one database: MariaDB when the run had one
(the study used MySQL), else PostgreSQL, else SQLite. Verdict rules: the kit's
claim rule (:func:`~stratabench.suites.kit.findings.judge`) on ratios of
medians; a claim "about N× less" is reproduced at 80% of N or more, beyond noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratabench.options import RunOptions
from stratabench.report.paired import ENOUGH, PairedRatio, paired_ratio
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult
from stratabench.results.stats import Summary
from stratabench.suites.kit.findings import TARGET, Finding, ResultIndex, Verdict, conclusions_table, findings_table
from stratabench.suites.kit.findings import judge_paired
from stratabench.suites.kit.reports import study_figure, study_report
from stratabench.suites.parking.codesize import code_size
from stratabench.suites.parking.process import IMPLEMENTATIONS
from stratabench.systems.parking.statements import KINDS

__all__ = ["RUNS_HINT", "ParkingResults", "parking_tables", "sureness"]

#: Table 1 of the study: function → (calls per run, share of run time in %).
STUDY_TABLE_1 = {"get_service_info": (22, 8.95), "create_reservation": (10, 26.67), "pay_reservation": (8, 19.30),
                 "get_user_account": (7, 1.24), "stop_service": (6, 13.81), "account_transfer": (6, 13.14),
                 "cancel_reservation": (4, 10.69), "check_plate_number": (3, 0.60), "leave_parking": (1, 2.69),
                 "issue_ticket": (1, 2.91)}  # fmt: skip
#: Table 2: kind → (SQLAlchemy app, YB.ORM app).
STUDY_TABLE_2 = {"SELECT": (78, 106), "SELECT FOR UPDATE": (88, 89), "UPDATE": (45, 42), "INSERT": (27, 27),
                 "DELETE": (0, 0)}  # fmt: skip
STUDY_SERVERS = ("pypy sa", "cpython sa", "yborm soci", "yborm odbc")
#: Table 3: (MB, thousand lines) after 100 runs; Table 4: (client %, server CPU %) gained with logging off.
STUDY_TABLE_3 = {"pypy sa": (19.02, 138.5), "cpython sa": (18.97, 138.5), "yborm soci": (20.78, 180.0),
                 "yborm odbc": (20.95, 180.0)}  # fmt: skip
STUDY_TABLE_4 = {"pypy sa": (10.0, 11.0), "cpython sa": (12.4, 26.0), "yborm soci": (11.5, 19.2),
                 "yborm odbc": (12.6, 21.4)}  # fmt: skip
#: Code size in KB: (business logic, data model).
STUDY_CODE = {"SQLAlchemy (study)": (20.4, 3.4), "YB.ORM (study)": (22.5, 5.7)}
_PREFERRED = ("mariadb", "postgresql", "sqlite")
RUNS_HINT = "--set parking.runs=20"
"""What to run when the runs are too few: the study's batch of 20 runs."""


def sureness(measured: PairedRatio | None) -> str:
    """``clear``, ``too close to call``, or ``too few to judge`` with the runs measured and what to run."""
    if measured is None:
        return "not measured"
    if measured.enough:
        return measured.sureness()
    return (f"too few to judge: {measured.n} run{'' if measured.n == 1 else 's'} per configuration "
            f"(needs {ENOUGH}); {RUNS_HINT}")


def _number(digits: int) -> Any:
    return lambda v: "-" if v is None else f"{v:,.{digits}f}"


class ParkingResults:
    """The run's parking cells by server, database and logging."""

    def __init__(self, results: Sequence[CellResult]) -> None:
        self.index = ResultIndex(results, "parking", ("server", "database", "logging"))
        ran = [r.params.get("database") for r in self.index.results if r.ok]
        self.database = next((d for d in _PREFERRED if d in ran), None)

    def get(self, server: str, logging: str = "off", database: str | None = None) -> CellResult | None:
        return self.index.find_ok(server=server, database=database or self.database, logging=logging)

    def why_missing(self, server: str, logging: str = "off") -> str:
        cell = self.index.find(server=server, database=self.database, logging=logging)
        if cell is None:
            return f"{server} was not part of this run"
        return f"{server}: {cell.error or cell.status}"

    def per_run(self, server: str, metric: str, logging: str = "off") -> float | None:
        cell = self.get(server, logging)
        return None if cell is None else cell.median(metric)


study_figure("parking", "the servers answer client processes over HTTP: the clients' wall time per request, and the servers' own CPU time (server_cpu_ns) where a verdict is about the server's work")


@study_report("parking")
def parking_tables(results: Sequence[CellResult], options: RunOptions) -> list[Table]:
    """Every table of the parking study for one run."""
    view = ParkingResults(results)
    return [_table_1(view), _table_2(view), _table_3(view), _table_4(view), _configurations(view), _code_size(),
            *_verdicts(view)]  # fmt: skip


def _table_1(view: ParkingResults) -> Table:
    source = next(((s, "on") for s in ("go-orm", "python-orm", "go-sql", "python-core") if view.get(s, "on")),
                  next(((s, "off") for s in IMPLEMENTATIONS if view.get(s)), None))  # fmt: skip
    cell = view.get(*source) if source else None
    calls = (cell.notes.get("calls") or {}) if cell else {}
    seconds = (cell.notes.get("call_seconds") or {}) if cell else {}
    total = sum(seconds.values()) or None
    table = Table("Table 1 - calls per suite run and share of run time", [
        Column("function", "function"), Column("study_calls", "calls (study)", "right"),
        Column("calls", "calls (here)", "right", _number(0)), Column("study_share", "share % (study)", "right", _number(2)),
        Column("share", f"share % ({source[0]}, log {source[1]})" if source else "share % (here)", "right",
               _number(2))])  # fmt: skip
    for function, (study_calls, study_share) in STUDY_TABLE_1.items():
        table.rows.append({"function": function, "study_calls": study_calls, "calls": calls.get(function),
                           "study_share": study_share,
                           "share": 100 * seconds[function] / total if total and function in seconds else None})
    table.rows.append({"function": "total", "study_calls": 68, "calls": sum(calls.values()) if calls else None,
                       "study_share": 100.0, "share": 100.0 if total else None})  # fmt: skip
    table.notes = ["study: YB.ORM+SOCI with logging; here: client time per function, connection to last byte"]
    return table


def _statements(cell: CellResult | None) -> dict[str, float] | None:
    return None if cell is None else cell.notes.get("statements")


def _table_2(view: ParkingResults) -> Table:
    columns = [Column("kind", "statement"), Column("study_sa", "SQLAlchemy (study)", "right"),
               Column("study_yb", "YB.ORM (study)", "right")]  # fmt: skip
    columns += [Column(server, server, "right", _number(0)) for server in IMPLEMENTATIONS]
    table = Table(f"Table 2 - SQL statements per suite run ({view.database or 'no database'}, logging off)", columns)
    counts = {server: _statements(view.get(server)) for server in IMPLEMENTATIONS}
    for kind in (*STUDY_TABLE_2, "total", "COMMIT", "ROLLBACK"):
        row: dict[str, Any] = {"kind": kind}
        if kind in STUDY_TABLE_2:
            row["study_sa"], row["study_yb"] = STUDY_TABLE_2[kind]
        elif kind == "total":
            row["study_sa"], row["study_yb"] = 238, 264
        for server, found in counts.items():
            if found is not None:
                row[server] = sum(found.get(k, 0) for k in STUDY_TABLE_2) if kind == "total" else found.get(kind)
        table.rows.append(row)
    notes = ["counted by each server's statement hook as sent to the driver; an executemany is one statement "
             "(SQLAlchemy 2 sends a transfer's two balance UPDATEs as one, where the study's SQLAlchemy 0.7 sent two)"]
    orm = view.get("python-orm")
    db_counts = orm.notes.get("db_statements") if orm else None
    if db_counts:
        notes.append("MariaDB's own counters for python-orm per run: " +
                     ", ".join(f"{kind} {value:g}" for kind, value in db_counts.items()))  # fmt: skip
    if view.database == "sqlite":
        notes.append("SQLite has no SELECT ... FOR UPDATE: locked reads are sent, and counted, as plain SELECTs")
    missing = [view.why_missing(s) for s in IMPLEMENTATIONS if counts[s] is None]
    table.notes = notes + missing
    return table


def _study_beside_ours(title: str, what: str, rows: tuple[str, str], study: dict[str, tuple[float, float]],
                       ours: dict[str, tuple[float | None, float | None]], digits: int) -> Table:  # fmt: skip
    """Two rows of figures: the study's four server configurations, then our four servers."""
    columns = [Column("what", what)]
    columns += [Column(name, f"{name} (study)", "right", _number(digits)) for name in STUDY_SERVERS]
    columns += [Column(server, server, "right", _number(digits)) for server in IMPLEMENTATIONS]
    table = Table(title, columns)
    for index, label in enumerate(rows):
        row: dict[str, Any] = {"what": label}
        row.update({name: figures[index] for name, figures in study.items()})
        row.update({server: figures[index] for server, figures in ours.items()})
        table.rows.append(row)
    return table


def _scaled(value: float | None, factor: float) -> float | None:
    return None if value is None else value * factor


def _table_3(view: ParkingResults) -> Table:
    ours = {server: (_scaled(view.per_run(server, "log_bytes", "on"), 100 / 1e6),
                     _scaled(view.per_run(server, "log_lines", "on"), 100 / 1e3)) for server in IMPLEMENTATIONS}
    table = _study_beside_ours(f"Table 3 - log file after 100 suite runs ({view.database or 'no database'})",
                               "log after 100 runs", ("size, MB", "lines, thousands"), STUDY_TABLE_3, ours, 2)
    table.notes = ["every HTTP message and every SQL statement with its parameters (and, for the Python servers, "
                   "SQLAlchemy's result rows)"]
    return table  # fmt: skip


def _gain(view: ParkingResults, server: str, metric: str) -> float | None:
    on, off = view.per_run(server, metric, "on"), view.per_run(server, metric, "off")
    return None if on is None or off is None or on == 0 else 100 * (on - off) / on


def _table_4(view: ParkingResults) -> Table:
    ours = {server: (_gain(view, server, "wall_ns"), _gain(view, server, "server_cpu_ns")) for server in IMPLEMENTATIONS}
    table = _study_beside_ours(f"Table 4 - improvement from turning logging off, % ({view.database or 'no database'})",
                               "gain from logging off, %", ("client run time", "server CPU"), STUDY_TABLE_4, ours, 1)
    table.notes = ["(with logging - without) / with, medians per run; small batches are noisy: use "
                   "--set parking.runs=20 --set parking.batches=5 for the study's procedure"]
    return table  # fmt: skip


def _configurations(view: ParkingResults) -> Table:
    seconds = _number(3)
    table = Table("Parking configurations: medians per suite run", [
        Column("server", "server"), Column("database", "database"), Column("logging", "log"),
        Column("runs", "runs ok", "right"), Column("client", "client s", "right", seconds),
        Column("cpu", "server CPU s", "right", seconds), Column("cpu_ci", "its interval", "right"),
        Column("db_cpu", "DB CPU s", "right", seconds),
        Column("statements", "statements", "right", _number(0)), Column("log_kb", "log KB", "right", _number(1))])
    for cell in view.index.results:
        p = cell.params
        sent = cell.notes.get("statements") or {}
        row = {"server": p.get("server"), "database": p.get("database"), "logging": p.get("logging")}
        if not cell.ok and not cell.notes:
            row["client"] = None
            row["runs"] = cell.status
            table.notes.append(f"{cell.cell}: {cell.error}")
            table.rows.append(row)
            continue
        runs, failed = cell.notes.get("runs", 0), cell.notes.get("failed_runs", 0)
        log_bytes = cell.median("log_bytes")
        row.update(runs=f"{runs - failed}/{runs}",
                   client=_per_second(cell.median("wall_ns")), cpu=_per_second(cell.median("server_cpu_ns")),
                   db_cpu=_per_second(cell.median("db_cpu_ns")), cpu_ci=_interval(cell.summary("server_cpu_ns")),
                   statements=sum(sent.get(k, 0) for k in KINDS if k not in ("COMMIT", "ROLLBACK")) if sent else None,
                   log_kb=None if log_bytes is None else log_bytes / 1e3)  # fmt: skip
        if cell.error:
            table.notes.append(f"{cell.cell}: {cell.error}")
        table.rows.append(row)
    table.notes.append("statements: SELECT, SELECT ... FOR UPDATE, UPDATE, INSERT and DELETE sent per run; "
                       "DB CPU only for a local server whose processes are known; the interval is the median's, "
                       "from the runs of every batch")  # fmt: skip
    return table


def _interval(summary: Summary | None) -> str | None:
    """The median's confidence interval in seconds, with its real level (a few runs give less than 95%)."""
    if summary is None or summary.n < 2:
        return None
    return f"{summary.ci_low / 1e9:.3f}-{summary.ci_high / 1e9:.3f} ({summary.ci_level:.0%})"


def _per_second(ns: float | None) -> float | None:
    return None if ns is None else ns / 1e9


def _code_size() -> Table:
    kb = _number(1)
    table = Table("Code size of each server, KB of source", [
        Column("server", "server"), Column("logic", "own logic", "right", kb), Column("model", "model", "right", kb),
        Column("shared", "shared with its sibling", "right", kb)])  # fmt: skip
    for name, (logic, model) in STUDY_CODE.items():
        table.rows.append({"server": name, "logic": logic, "model": model})
    for server, parts in code_size().items():
        table.rows.append({"server": server, **{part: None if size is None else size / 1e3
                                                for part, size in parts.items()}})  # fmt: skip
    table.notes = ["the study's servers each held all their logic; ours share an HTTP front and protocol rules "
                   "(Python) or the business logic (Go), counted apart; docstrings and comments included"]
    return table


def _ratio(view: ParkingResults, slower: str, faster: str, metric: str = "server_cpu_ns") -> PairedRatio | None:
    """``slower``'s over ``faster``'s with its interval, on the report's database with logging off."""
    return paired_ratio(view.get(slower), view.get(faster), metric)


def _here(measured: PairedRatio | None, what: str) -> str:
    return "-" if measured is None else f"{measured} {what}"


#: The database the project's targets were set for: the study's MySQL, whose fork MariaDB is.
TARGET_DATABASE = "mariadb"


def _ratio_finding(view: ParkingResults, id: str, claim: str, published: str, slower: str, faster: str,
                   metric: str, bound: float, *, target: bool = False, **extra: Any) -> Finding:  # fmt: skip
    measured = _ratio(view, slower, faster, metric)
    missing = [view.why_missing(s) for s in (slower, faster) if view.get(s) is None]
    verdict, qualifier = judge_paired(measured, bound), ""
    evidence = "; ".join(missing) or f"{metric} per suite run, ratio with its interval, at least {bound:g}x"
    if target and view.database != TARGET_DATABASE:
        # A target set on the study's database says nothing about another's.
        verdict, measured = Verdict.NOT_MEASURED, None
        evidence = (f"set for MariaDB (the study's MySQL), this run's database is {view.database or 'none'}: "
                    "run with --services local")
    elif verdict is Verdict.TOO_FEW and measured is not None:
        qualifier = f"{sureness(measured).removeprefix('too few to judge: ')}"
    return Finding(id, claim, verdict, here=_here(measured, f"({slower} / {faster})"), published=published,
                   evidence=evidence, qualifier=qualifier, **extra)  # fmt: skip


#: The target's own count: every server passes the driver 100 runs in a row.
TARGET_RUNS = 100


def _every_run_passes(passed: Sequence[CellResult], everyone: Sequence[CellResult]) -> Finding:
    """T4: a failed run misses it at once; passing it takes the target's 100 runs per configuration."""
    runs = min((int(c.notes.get("runs") or 0) for c in everyone), default=0)
    verdict, qualifier = Verdict.NOT_MEASURED, ""
    if everyone and len(passed) < len(everyone):
        verdict = Verdict.DOES_NOT_HOLD
    elif everyone and runs < TARGET_RUNS:
        verdict = Verdict.TOO_FEW
        qualifier = f"{runs} run{'' if runs == 1 else 's'} per configuration, the target is {TARGET_RUNS} in a row; " \
                    "--set parking.runs=20 --set parking.batches=5"
    elif everyone:
        verdict = Verdict.HOLDS
    return Finding("T4", f"every server passes the driver in every run ({TARGET_RUNS} in a row)", verdict,
                   here=f"{len(passed)} of {len(everyone)} configurations without a failed run", published="all",
                   words=TARGET, evidence="a failed run is recorded, never retried", qualifier=qualifier)


def _verdicts(view: ParkingResults) -> list[Table]:
    orm = view.get("python-orm")
    statements = _statements(orm)
    matches = statements is not None and view.database == "mariadb" and all(
        statements.get(kind) == STUDY_TABLE_2[kind][0] for kind in ("SELECT", "SELECT FOR UPDATE", "INSERT")
    ) and statements.get("UPDATE") in (44, 45)  # fmt: skip
    table_2 = Finding(
        "C0", "the SQLAlchemy server sends 78 SELECT, 88 locked, 45 UPDATE, 27 INSERT per run",
        Verdict.NOT_MEASURED if statements is None or view.database != "mariadb" else
        (Verdict.HOLDS if matches else Verdict.DOES_NOT_HOLD),
        here="-" if statements is None else ", ".join(f"{k} {statements.get(k, 0):g}" for k in STUDY_TABLE_2),
        published="78 / 88 / 45 / 27",
        evidence="python-orm on MariaDB; UPDATE 44 is SQLAlchemy 2's batched update" if view.database == "mariadb"
        else "needs MariaDB, as the study's MySQL: run with --services local",
    )  # fmt: skip
    logging_gain = _gain(view, "python-orm", "server_cpu_ns")
    on, off = view.get("python-orm", "on"), view.get("python-orm", "off")
    logging_ratio = paired_ratio(on, off, "server_cpu_ns")
    conclusions = [
        table_2,
        _ratio_finding(view, "C1", "the compiled ORM uses about a third of the Python ORM's server CPU", "about 1/3",
                       "python-orm", "go-orm", "server_cpu_ns", 2.4),
        _ratio_finding(view, "C2", "client response time improves about 38% with the compiled ORM", "38%",
                       "python-orm", "go-orm", "wall_ns", 1.29),
        Finding("C3", "turning logging off helps the Python ORM's server CPU 11-26%", judge_paired(logging_ratio, 1 + 0.8 * 0.11),
                qualifier="" if logging_ratio is None or logging_ratio.enough else
                sureness(logging_ratio).removeprefix("too few to judge: "),
                here="-" if logging_gain is None else f"{logging_gain:.1f}%", published="26% (CPython)",
                evidence="python-orm log on / log off, server CPU medians"),
        Finding("C4", "PyPy does not speed up SQLAlchemy", Verdict.NOT_REPRODUCIBLE, published="no gain",
                evidence="no PyPy in this environment; not measured"),
        Finding("C5", "SOCI is slightly slower than ODBC", Verdict.NOT_REPRODUCIBLE, published="a few %",
                evidence="YB.ORM and its back ends are not part of today's stacks"),
    ]  # fmt: skip
    passed = [c for c in view.index.results if c.ok]
    everyone = view.index.results
    targets = [
        _ratio_finding(view, "T1", "go-sql uses at least 3x less server CPU than python-orm", "3x", "python-orm",
                       "go-sql", "server_cpu_ns", 3.0, target=True, words=TARGET),
        _ratio_finding(view, "T2", "python-core uses at least 1.5x less server CPU than python-orm", "1.5x",
                       "python-orm", "python-core", "server_cpu_ns", 1.5, target=True, words=TARGET),
        Finding("T3", "go-orm's server CPU against python-orm, whatever it is", Verdict.BY_CONSTRUCTION
                if _ratio(view, "python-orm", "go-orm") else Verdict.NOT_MEASURED,
                here=_here(_ratio(view, "python-orm", "go-orm"), "(python-orm / go-orm)"), published="-",
                evidence="reported, no bound", words={Verdict.BY_CONSTRUCTION: "reported"}),
        _every_run_passes(passed, everyone),
    ]  # fmt: skip
    return [
        conclusions_table(f"The study's conclusions, judged ({view.database or 'no database'})", conclusions,
                          notes=[f"{f.id}: {f.here} (published {f.published})" for f in conclusions]),
        findings_table("Targets of this project", targets, {"id": "#", "claim": "target", "here": "here",
                                                             "verdict": "verdict"}, evidence_notes=True),
    ]  # fmt: skip
