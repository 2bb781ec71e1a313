"""The parking suite: its cells, a real run on SQLite through the CLI, and its verdicts on known results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stratabench.cli.main import main
from stratabench.engine.operation import CellSpec
from stratabench.errors import UsageError
from stratabench.options import RunOptions
from stratabench.results.records import CellResult, MetricResult
from stratabench.suites.parking.report import parking_tables
from stratabench.suites.parking.suite import ParkingSlices, ParkingSuite

PG = "postgresql://u:secret@127.0.0.1:5432/db"
MY = "mysql://u:secret@127.0.0.1:3306/db"


def test_cells_are_server_by_database_by_logging_with_sqlite_always() -> None:
    assert [c.name for c in ParkingSuite(RunOptions()).cells()][:2] == ["python-orm sqlite log off",
                                                                         "python-orm sqlite log on"]  # fmt: skip
    assert len(ParkingSuite(RunOptions()).cells()) == 4 * 2
    cells = ParkingSuite(RunOptions(stores=(PG, MY, "redis://127.0.0.1:6379/0"))).cells()
    assert len(cells) == 4 * 3 * 2
    assert {c.params["database"] for c in cells} == {"sqlite", "postgresql", "mariadb"}
    assert all("secret" not in json.dumps(c.params) for c in cells)


@pytest.mark.parametrize(("name", "value"), [("parking.servers", "python-orm,cobol"), ("parking.logging", "loud"),
                                             ("parking.runs", "0")])  # fmt: skip
def test_bad_settings_are_one_line(name: str, value: str) -> None:
    with pytest.raises(UsageError, match=name):
        ParkingSuite(RunOptions(settings={name: value})).cells()


def test_a_run_on_sqlite_measures_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run.jsonl"
    code = main(["run", "parking", "--set", "parking.servers=python-core", "--set", "parking.logging=on",
                 "--set", "parking.runs=2", "-o", str(out)])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0
    records = [r for r in map(json.loads, out.read_text().splitlines()) if r["type"] == "cell"]
    assert [r["cell"] for r in records] == ["python-core sqlite log on"]
    cell = records[0]
    assert cell["status"] == "ok" and cell["notes"]["runs"] == 2 and cell["notes"]["failed_runs"] == 0
    # One run a slice, each its own moment of the run (no Python rounds here: the slices follow each other).
    assert cell["metrics"]["wall_ns"]["rounds"] == [0, 1] and cell["metrics"]["sql_statements"]["rounds"] == [0, 1]
    assert {"wall_ns", "server_cpu_ns", "log_bytes", "log_lines"} <= set(cell["metrics"])
    assert cell["notes"]["statements"]["COMMIT"] == 32 and cell["notes"]["calls"]["get_service_info"] == 22
    assert "Table 2 - SQL statements per suite run (sqlite, logging off)" in printed


def _cell(server: str, cpu_ms: list[float], statements: dict[str, int] | None = None, logging: str = "off",
          database: str = "mariadb") -> CellResult:  # fmt: skip
    return CellResult("parking", f"{server} {database} log {logging}",
                      {"server": server, "database": database, "logging": logging}, "service", "ok", loops=1,
                      metrics={"server_cpu_ns": MetricResult.of([v * 1e6 for v in cpu_ms]),
                               "wall_ns": MetricResult.of([v * 4e6 for v in cpu_ms])},
                      notes={"runs": len(cpu_ms), "failed_runs": 0, "statements": statements})  # fmt: skip


def test_verdicts_on_known_results() -> None:
    spec = {"SELECT": 78, "SELECT FOR UPDATE": 88, "UPDATE": 44, "INSERT": 27, "DELETE": 0, "COMMIT": 32,
            "ROLLBACK": 34}  # fmt: skip
    results = [_cell("python-orm", [400, 410, 405, 395, 402, 398], spec),
               _cell("python-core", [300, 305, 298, 302, 301, 299]),
               _cell("go-sql", [60, 61, 59, 62, 60, 58])]  # fmt: skip
    tables = {t.title: t for t in parking_tables(results, RunOptions())}
    conclusions = tables["The study's conclusions, judged (mariadb)"].rows
    assert conclusions[0]["verdict"] == "reproduced"  # the docs/studies/parking.md §11.4 counts
    assert conclusions[1]["verdict"] == "not measured"  # no go-orm cell
    targets = {row["id"]: row["verdict"] for row in tables["Targets of this project"].rows}
    assert targets.pop("T4").startswith("too few to judge (6 runs per configuration, the target is 100 in a row")
    assert targets == {"T1": "met", "T2": "missed", "T3": "not measured"}
    assert tables["Table 2 - SQL statements per suite run (mariadb, logging off)"].rows[0]["python-orm"] == 78


def test_targets_are_judged_on_mariadb_and_from_enough_runs_only() -> None:
    """On SQLite the CPU targets say what to run; from one run a configuration, nothing is missed or met."""
    sqlite = [_cell("python-orm", [400] * 6, database="sqlite"), _cell("go-sql", [60] * 6, database="sqlite")]
    targets = {row["id"]: row for row in
               next(t for t in parking_tables(sqlite, RunOptions()) if t.title == "Targets of this project").rows}
    assert targets["T1"]["verdict"] == "not measured" and targets["T1"]["here"] == ""
    one_run = [_cell("python-orm", [400]), _cell("go-sql", [60])]
    tables = {t.title: t for t in parking_tables(one_run, RunOptions())}
    targets = {row["id"]: row["verdict"] for row in tables["Targets of this project"].rows}
    assert targets["T1"] == ("too few to judge (1 run per configuration (needs 6); --set parking.runs=20)")
    conclusions = [row["verdict"] for row in tables["The study's conclusions, judged (mariadb)"].rows]
    assert "refuted" not in conclusions and "missed" not in targets.values()


def python_core_slices(tmp_path: Path, runs: int) -> tuple[list[CellSpec], ParkingSlices]:
    """The python-core server's two cells (logging off and on), ``runs`` runs a batch, two batches, sliced."""
    suite = ParkingSuite(RunOptions(settings={"parking.servers": "python-core", "parking.logging": "off,on",
                                              "parking.runs": str(runs), "parking.batches": "2"}))
    cells = suite.cells()
    return cells, suite.slices(cells, tmp_path)


def test_slices_take_one_run_of_every_cell_keeping_each_batch_server_between_them(tmp_path: Path) -> None:
    cells, session = python_core_slices(tmp_path, 2)
    try:
        assert session.count == 4
        parts = [list(session.run(index)) for index in range(session.count)]
    finally:
        session.close()
    assert [[part.cell for part in slice_] for slice_ in parts] == [[cell.name for cell in cells]] * 4
    assert all(part.ok and part.metrics["wall_ns"].summary.n == 1 for slice_ in parts for part in slice_)
    notes = session.notes(cells[0], [slice_[0] for slice_ in parts])
    assert (notes["runs"], notes["batches"], notes["failed_runs"]) == (4, 2, 0)
    assert sorted(path.name for path in tmp_path.glob("parking-*.db")) == ["parking-0.db", "parking-1.db"]


def test_a_go_server_that_cannot_be_built_makes_its_cells_unavailable_whole_run_and_sliced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stratabench.suites.parking import suite as module

    built: list[int] = []
    monkeypatch.setattr(module, "_build_go_server", lambda: built.append(1) or "Go is missing")
    suite = ParkingSuite(RunOptions(settings={"parking.servers": "go-sql", "parking.logging": "off"}))
    cells = suite.cells()
    whole = list(suite.run_external(cells, tmp_path))
    session = suite.slices(cells, tmp_path)
    try:
        sliced = list(session.run(0))
        later = list(session.run(1))
    finally:
        session.close()
    for result in (*whole, *sliced):
        assert result.status == "unavailable" and result.error == "go-sql: Go is missing"
    assert [r.cell for r in whole] == [r.cell for r in sliced] == [c.name for c in cells] and later == []
    assert built == [1, 1]  # built (or found missing) once a run, not once a cell


def test_past_the_floor_a_cell_takes_more_runs_from_its_last_batchs_server(tmp_path: Path) -> None:
    # The engine asks run_more of the cells that miss the target (engine/slices.py): one more measured run each, on
    # the server its last batch kept, merged with the floor's runs.
    from stratabench.engine.slices import merge_slices

    cells, session = python_core_slices(tmp_path, 1)
    try:
        floor = [list(session.run(index)) for index in range(session.count)]
        more = [list(session.run_more(index, cells[1:])) for index in (2, 3)]
    finally:
        session.close()
    assert [[part.cell for part in parts] for parts in more] == [[cells[1].name]] * 2
    parts = [parts[1] for parts in floor] + [parts[0] for parts in more]
    assert all(part.ok for part in parts)
    merged = merge_slices(cells[1], list(enumerate(parts)), session.notes)
    assert merged.metrics["wall_ns"].rounds == (0, 1, 2, 3)
    assert (merged.notes["runs"], merged.notes["batches"]) == (4, 2)  # runs 3 and 4 on the second batch's server
