"""Every parking server against SQLite, PostgreSQL and MariaDB, driven by the study's suite.

Each server process is started the way the suite starts it; the driver runs
the five test cases (68 calls, Table 1's shape); the database then holds the
invariants of docs/studies/parking.md §9; a batch of malformed calls gets only the
answers docs/studies/parking.md §3 allows and changes no row. On MariaDB, ``python-orm``
sends the statements of docs/studies/parking.md §11.4, ``python-core`` fewer in the same
transactions, and MariaDB's own counters agree with both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stratabench.systems.parking.driver import SuiteDriver
from stratabench.systems.parking.fuzz import run_fuzz
from stratabench.systems.parking.invariants import snapshot, violations
from stratabench.suites.parking.process import GO_PROGRAM, ServerProcess
from stratabench.systems.parking.schema import create_parking_engine, recreate

pytestmark = pytest.mark.server

REPO = Path(__file__).resolve().parents[2]
# The Go servers join the matrix once their program is part of the checkout.
GO_SERVERS = ["go-orm", "go-sql"] if (REPO / "go" / "cmd" / GO_PROGRAM).is_dir() else []
SERVERS = ["python-orm", "python-core", *GO_SERVERS]
DATABASES = ["sqlite", "postgresql", "mariadb"]

#: Table 1: calls per function in one suite run.
TABLE_1 = {"get_service_info": 22, "create_reservation": 10, "pay_reservation": 8, "get_user_account": 7,
           "stop_service": 6, "account_transfer": 6, "cancel_reservation": 4, "check_plate_number": 3,
           "leave_parking": 1, "issue_ticket": 1}  # fmt: skip
#: docs/studies/parking.md §11.4: what python-orm sends per suite run on MariaDB (one batched UPDATE counted once).
SPEC_11_4 = {"SELECT": 78, "SELECT FOR UPDATE": 88, "UPDATE": 44, "INSERT": 27, "DELETE": 0, "COMMIT": 32,
             "ROLLBACK": 34, "OTHER": 0}  # fmt: skip


@pytest.fixture
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A freshly created and seeded parking database; its URL."""
    name: str = request.param
    if name == "sqlite":
        url = f"sqlite:///{tmp_path / 'parking.db'}"
    else:
        server_url: Callable[[str], str] = request.getfixturevalue("server_url")
        url = server_url(name)
    engine = create_parking_engine(url)
    try:
        recreate(engine)
    finally:
        engine.dispose()
    yield url


@pytest.fixture
def go_ready(request: pytest.FixtureRequest) -> None:
    if GO_SERVERS:
        go_program: Callable[[str], Path] = request.getfixturevalue("go_program")
        go_program(GO_PROGRAM)


@pytest.mark.parametrize("database", DATABASES, indirect=True)
@pytest.mark.parametrize("impl", SERVERS)
def test_server_passes_the_suite_and_refuses_malformed_calls(impl: str, database: str, go_ready: None) -> None:
    engine = create_parking_engine(database)
    try:
        with ServerProcess(impl, database) as server:
            driver = SuiteDriver(server.base_url)
            for _ in range(2):
                result = driver.run()
                assert result.ok, result.failure
                assert dict(result.calls) == TABLE_1
            assert result.calls_per_test == {"test_account_transfer": 16, "test_parking_account": 20,
                                             "test_postpay": 12, "test_prepay": 17, "test_version": 3}  # fmt: skip
            assert violations(engine) == []
            before = snapshot(engine)
            assert run_fuzz(server.base_url) == []
            assert snapshot(engine) == before, "a refused call changed a row"
    finally:
        engine.dispose()


def _mariadb_counters(url: str) -> dict[str, int]:
    import pymysql
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(url)
    connection = pymysql.connect(host=parts.hostname, port=parts.port, user=unquote(parts.username or ""),
                                 password=unquote(parts.password or ""))  # fmt: skip
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW GLOBAL STATUS WHERE Variable_name IN "
                           "('Com_select', 'Com_update', 'Com_insert', 'Com_delete', 'Com_commit', 'Com_rollback')")
            return {name.lower(): int(value) for name, value in cursor.fetchall()}
    finally:
        connection.close()


@pytest.mark.parametrize("database", ["mariadb"], indirect=True)
def test_python_orm_sends_the_statements_of_spec_11_4_and_python_core_fewer(database: str) -> None:
    counts = {}
    for impl in ("python-orm", "python-core"):
        with ServerProcess(impl, database) as server:
            driver = SuiteDriver(server.base_url)
            assert driver.run().ok  # start-up and the first run stay out of the count
            hook_before, db_before = server.statements(), _mariadb_counters(database)
            result = driver.run()
            hook_after, db_after = server.statements(), _mariadb_counters(database)
        assert result.ok, result.failure
        assert hook_before is not None and hook_after is not None
        counts[impl] = {kind: hook_after[kind] - hook_before[kind] for kind in hook_after}
        executed = {name: db_after[name] - db_before[name] for name in db_after}
        sent = counts[impl]
        # MariaDB's own counters agree; it runs a batched UPDATE (executemany) row by row.
        assert executed["com_select"] == sent["SELECT"] + sent["SELECT FOR UPDATE"]
        assert (executed["com_insert"], executed["com_delete"]) == (sent["INSERT"], sent["DELETE"])
        assert (executed["com_commit"], executed["com_rollback"]) == (sent["COMMIT"], sent["ROLLBACK"])
        if impl == "python-orm":
            assert sent == SPEC_11_4
            assert executed["com_update"] == 45  # as the study's Table 2
    orm, core = counts["python-orm"], counts["python-core"]
    assert (core["COMMIT"], core["ROLLBACK"]) == (orm["COMMIT"], orm["ROLLBACK"])  # the same transactions
    kinds = ("SELECT", "SELECT FOR UPDATE", "UPDATE", "INSERT")
    assert all(core[kind] <= orm[kind] for kind in kinds), (core, orm)
    assert sum(core[kind] for kind in kinds) < sum(orm[kind] for kind in kinds)
