"""The parking schema: exact money on every database, lower-case names, URLs for SQLAlchemy."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
import sqlalchemy as sa

from stratabench.errors import UsageError
from stratabench.systems.parking.schema import create_parking_engine, ddl, recreate, sqlalchemy_url, tables


def test_sqlite_keeps_money_exact_as_integer_micro_units(tmp_path: Path) -> None:
    engine = create_parking_engine(f"sqlite:///{tmp_path / 'p.db'}")
    try:
        recreate(engine)
        account = tables()["account"]
        with engine.begin() as connection:
            connection.execute(account.insert(), {"user_eid": "u", "balance": Decimal("12.75"),
                                                  "reserved": Decimal("0.000001")})  # fmt: skip
            stored = connection.exec_driver_sql("SELECT balance, reserved FROM t_account").one()
            read = connection.execute(sa.select(account.c.balance, account.c.reserved)).one()
        assert tuple(stored) == (12_750_000, 1)
        assert tuple(read) == (Decimal("12.75"), Decimal("0.000001"))
        with pytest.raises(sa.exc.StatementError), engine.begin() as connection:
            connection.execute(account.insert(), {"user_eid": "v", "balance": Decimal("0.0000001"), "reserved": 0})
    finally:
        engine.dispose()


def test_urls_get_the_project_drivers() -> None:
    assert sqlalchemy_url("mysql://u:p@127.0.0.1:3306/db") == "mysql+pymysql://u:p@127.0.0.1:3306/db"
    assert sqlalchemy_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    with pytest.raises(UsageError, match="sqlite:///PATH"):
        sqlalchemy_url("redis://127.0.0.1")


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql", "mysql"])
def test_ddl_uses_lower_case_names_and_exact_money(dialect: str) -> None:
    text = ddl(dialect)
    assert "CREATE TABLE t_account_transfer" in text
    assert ("BIGINT" if dialect == "sqlite" else "NUMERIC(16, 6)") in text
