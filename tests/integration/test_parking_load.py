"""The parking servers under load, on a real private PostgreSQL started by the services code.

Counts and exact checks, never speeds: several drivers at once get only the
answers the spec requires, the database reconciles exactly afterwards, and
the merged histogram holds every client's latencies. A wallet changed by
SQL behind the drivers' back is named by the reconciliation in one line; a
server killed under load stops its configuration in one line, keeps the
histograms, and leaves no client behind.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from stratabench.cli.main import main
from stratabench.load.histogram import decode, merge
from stratabench.load.run import LoadResult
from stratabench.results.format import load
from stratabench.suites.parking.load import (
    ParkingLoadSpec,
    reconcile,
    reconciliation_failure,
    run_parking_load,
)
from stratabench.suites.parking.process import GO_PROGRAM

pytestmark = pytest.mark.server

FUNCTIONS = {"get_service_info", "create_reservation", "pay_reservation", "get_user_account", "stop_service",
             "account_transfer", "cancel_reservation", "check_plate_number", "leave_parking", "issue_ticket"}  # fmt: skip


@pytest.fixture
def go_ready(go_program: Callable[[str], Path]) -> None:
    go_program(GO_PROGRAM)


def assert_counts_add_up(result: LoadResult) -> None:
    merged = decode(result.histogram)
    assert merged.get_total_count() == result.ops == sum(r.ops for r in result.reports) > 0
    assert merge(r.histogram for r in result.reports).equals(merged)
    assert sum(decode(h).get_total_count() for h in result.interval_histograms) == result.ops


def assert_no_client_left(result: LoadResult) -> None:
    pids = {r.pid for r in result.reports if r.pid}
    assert pids and os.getpid() not in pids
    alive = [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert alive == [], f"client processes still running: {alive}"


@pytest.mark.parametrize("impl", ["python-core", "go-sql"])
def test_drivers_at_once_get_only_right_answers_and_the_database_reconciles(
        impl: str, server_url: Callable[[str], str], go_ready: None) -> None:  # fmt: skip
    spec = ParkingLoadSpec(impl=impl, db_url=server_url("postgresql"), clients=4, warmup_s=0.5, duration_s=3.0)
    outcome = run_parking_load(spec)
    result = outcome.load
    assert result.ok, result.error
    assert result.failed_checks == 0 and result.errors == 0
    assert outcome.discrepancies == ()
    assert_counts_add_up(result)
    assert result.checked == result.ops  # every answer was checked
    # The drivers start at different scenarios of the mix (a slow machine may not finish a round in 3 s).
    seen = {kind for report in result.reports for kind in report.kinds}
    assert {"get_service_info", "create_reservation", "pay_reservation", "check_plate_number", "stop_service",
            "account_transfer"} <= seen <= FUNCTIONS  # fmt: skip
    assert_no_client_left(result)


def test_a_wallet_changed_behind_the_drivers_back_is_named_in_one_line(server_url: Callable[[str], str]) -> None:
    import sqlalchemy as sa

    from stratabench.systems.parking.schema import create_parking_engine, tables

    spec = ParkingLoadSpec(impl="python-core", db_url=server_url("postgresql"), clients=2, warmup_s=0.2,
                           duration_s=1.5)  # fmt: skip
    outcome = run_parking_load(spec)
    assert outcome.load.ok and outcome.discrepancies == (), outcome.load.error
    ran = outcome.load.spec
    assert isinstance(ran, ParkingLoadSpec)
    account = tables()["account"]
    engine = create_parking_engine(ran.db_url)
    try:
        with engine.begin() as connection:
            user = connection.execute(sa.select(account.c.user_eid).order_by(account.c.id).limit(1)).scalar_one()
            connection.execute(sa.update(account).where(account.c.user_eid == user)
                               .values(balance=account.c.balance + 1))  # fmt: skip
    finally:
        engine.dispose()
    problems = reconcile(ran)
    line = reconciliation_failure(problems)
    assert line is not None and "\n" not in line
    assert line.startswith(f"the database does not reconcile after the load: wallet of {user!r}: balance ")
    assert reconciliation_failure(reconcile(spec)) == line  # the same database, found again from the given URL
    product = tables()["product"]
    engine = create_parking_engine(ran.db_url)
    try:
        with engine.begin() as connection:
            connection.execute(sa.update(product).where(product.c.name == "L1t")
                               .values(places_avail=product.c.places_avail - 1))  # fmt: skip
    finally:
        engine.dispose()
    assert any(p.startswith("lot L1t: ") and p.endswith("orders hold one") for p in reconcile(ran)), reconcile(ran)


def test_a_server_killed_under_load_stops_in_one_line_and_keeps_the_histograms(tmp_path: Path) -> None:
    killers: list[threading.Thread] = []

    def kill_soon(pid: int) -> None:
        def kill() -> None:
            time.sleep(2.5)  # the clients start, warm up, and measure for a while
            os.kill(pid, signal.SIGKILL)

        killers.append(threading.Thread(target=kill))
        killers[0].start()

    spec = ParkingLoadSpec(impl="python-core", db_url=f"sqlite:///{tmp_path / 'parking.db'}", clients=2,
                           warmup_s=0.2, duration_s=30.0)  # fmt: skip
    started = time.monotonic()
    outcome = run_parking_load(spec, on_server=kill_soon)
    killers[0].join()
    result = outcome.load
    assert time.monotonic() - started < 25, "the configuration ran on after its server died"
    assert result.error is not None and "\n" not in result.error
    assert result.error.startswith("2 of 2 clients stopped early"), result.error
    assert "latencies measured until then are kept" in result.error
    assert_counts_add_up(result)
    assert outcome.discrepancies == ()  # what was committed before the kill still reconciles
    assert_no_client_left(result)


def test_the_load_command_writes_a_checked_cell_per_server(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], go_ready: None) -> None:  # fmt: skip
    output = tmp_path / "load.jsonl"
    code = main(["load", "parking", "--server", "python-orm,go-orm", "--db", "sqlite", "--clients", "2",
                 "--duration", "1", "--warmup", "0.2", "-o", str(output)])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    cells = load(output).cells
    assert [c.cell for c in cells] == ["python-orm/sqlite/c2/closed", "go-orm/sqlite/c2/closed"]
    for cell in cells:
        assert cell.ok and cell.integrity is not None and cell.integrity.ok
        assert cell.params["server"] in ("python-orm", "go-orm") and cell.params["database"] == "sqlite"
        assert decode(cell.notes["histogram"]).get_total_count() == cell.notes["ops"] > 0
    assert "parking under load" in out and "go-orm/sqlite/c2/closed" in err
