"""The parking tables (docs/studies/parking.md §6) for SQLite, PostgreSQL and MariaDB.

One declaration serves every server: the suite creates the tables and seeds
the two lots before it starts a server, so the four servers (two Python, two
Go) meet exactly the same schema. Names differ from the original DDL in one
conscious way: tables and columns are **lower case** (``t_product.places_avail``),
so that hand-written SQL works unquoted on all three databases (PostgreSQL
folds unquoted names to lower case; MariaDB's table names are case-sensitive
on Linux).

Types:

- money and hours are ``DECIMAL(16,6)`` on PostgreSQL and MariaDB, exact in
  both directions; SQLite has no decimal type, so there they are ``BIGINT``
  micro-units (value × 10**6), never floating point (docs/studies/parking.md §12);
- timestamps are ``TIMESTAMP``/``DATETIME`` without time zone; the servers
  write whole seconds of the application server's local clock (docs/studies/parking.md §5.1).
  On SQLite they are text ``YYYY-MM-DD HH:MM:SS.ffffff`` (SQLAlchemy's
  format), which sorts and compares as time does.

The original DDL's quirks are fixed consciously: ``t_account_transfer`` is
dropped with the others, the misplaced duplicate index on the payment number
is not created, and ``paid_amount`` is NOT NULL as in the DDL.

``python -m stratabench.systems.parking.schema DB_URL`` recreates and seeds
a database; ``--ddl DIALECT`` prints the DDL (for the Go servers' authors).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from stratabench.errors import UnavailableError, UsageError

if TYPE_CHECKING:
    from sqlalchemy import Engine, MetaData, Table

__all__ = [
    "MICRO",
    "SEED_LOTS",
    "create_parking_engine",
    "metadata",
    "own_database",
    "recreate",
    "reseed_lots",
    "sqlalchemy_url",
    "tables",
]

#: Scale of the SQLite money columns: one unit is 10**-6, as DECIMAL(16,6).
MICRO = 10**6

#: The seed rows (docs/studies/parking.md §6): name → (display name, free places, rate per hour).
SEED_LOTS: dict[str, tuple[str, int, Decimal]] = {
    "1333": ("N1333", 8000, Decimal(51)),
    "15001": ("N15001", 5000, Decimal(60)),
}

_DRIVERS = {
    "mysql": "mysql+pymysql",
    "mariadb": "mysql+pymysql",
    "postgresql": "postgresql+psycopg",
    "postgres": "postgresql+psycopg",
    "sqlite": "sqlite",
}


def _import_sqlalchemy() -> Any:
    try:
        import sqlalchemy
    except ImportError as error:
        raise UnavailableError(
            "the parking servers need SQLAlchemy 2: install stratabench[parking]"
        ) from error
    return sqlalchemy


def sqlalchemy_url(url: str) -> str:
    """A stratabench database URL (``mysql://``, ``postgresql://``, ``sqlite:///path``) for SQLAlchemy.

    Raises
    ------
    UsageError
        For a scheme that is none of SQLite, PostgreSQL, MariaDB/MySQL.
    """
    scheme, separator, rest = url.partition("://")
    base = scheme.split("+", 1)[0].lower()
    if not separator or base not in _DRIVERS:
        raise UsageError(
            f"parking database URL {scheme or url!r}: use sqlite:///PATH, postgresql://... or mysql://..."
        )
    if "+" in scheme:
        return url  # the user chose a driver
    return f"{_DRIVERS[base]}://{rest}"


def dialect_of(url: str) -> str:
    """``sqlite``, ``postgresql`` or ``mysql`` for a database URL."""
    return sqlalchemy_url(url).split("://", 1)[0].split("+", 1)[0]


_METADATA: MetaData | None = None


def metadata() -> MetaData:
    """The parking tables, declared once (SQLAlchemy Core)."""
    global _METADATA
    if _METADATA is None:
        _METADATA = _declare()
    return _METADATA


def tables() -> dict[str, Table]:
    """Short name (``product``, ``order``, ...) → table."""
    declared = metadata().tables
    return {name.removeprefix("t_"): table for name, table in declared.items()}


def _declare() -> MetaData:
    sa = _import_sqlalchemy()
    from sqlalchemy.types import TypeDecorator

    class Decimal6(TypeDecorator[Decimal]):
        """DECIMAL(16,6), stored as integer micro-units where the database has no decimal type."""

        impl = sa.Numeric(16, 6, asdecimal=True)
        cache_ok = True

        def load_dialect_impl(self, dialect: Any) -> Any:
            if dialect.name == "sqlite":
                return dialect.type_descriptor(sa.BigInteger())
            return dialect.type_descriptor(sa.Numeric(16, 6, asdecimal=True))

        def process_bind_param(self, value: Any, dialect: Any) -> Any:
            if value is None or dialect.name != "sqlite":
                return value
            scaled = Decimal(value) * MICRO
            if scaled != scaled.to_integral_value():
                raise ValueError(f"{value} has more than six decimals")
            return int(scaled)

        def process_result_value(self, value: Any, dialect: Any) -> Decimal | None:
            if value is None:
                return None
            if dialect.name == "sqlite":
                return Decimal(int(value)).scaleb(-6)
            return Decimal(value)

    big_id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")  # SQLite autoincrements INTEGER keys only
    money = Decimal6()
    when = sa.DateTime()
    meta = sa.MetaData()

    def key() -> Any:
        return sa.Column("id", big_id, primary_key=True, autoincrement=True)

    def ref(table: str) -> Any:
        return sa.ForeignKey(f"t_{table}.id")

    sa.Table(
        "t_product", meta, key(),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("display_name", sa.String(200), nullable=False),
        sa.Column("places_avail", sa.Integer, nullable=False),
        sa.Column("price", money, nullable=False),
        sa.Index("i_product_name", "name", unique=True),
    )  # fmt: skip
    sa.Table(
        "t_order", meta, key(),
        sa.Column("product_id", big_id, ref("product"), nullable=False),
        sa.Column("user_eid", sa.String(100)),
        sa.Column("ticket_number", sa.String(100)),
        sa.Column("plate_number", sa.String(20)),
        sa.Column("start_ts", when, nullable=False),
        sa.Column("paid_until_ts", when, nullable=False),
        sa.Column("finish_ts", when),
        sa.Column("paid_amount", money, nullable=False),
        sa.Column("price", money),
        sa.Index("i_order_park_num", "product_id", "ticket_number", unique=True),
        sa.Index("i_order_plate", "plate_number"),
        sa.Index("i_order_user", "user_eid"),
        sa.Index("i_order_paid_until", "paid_until_ts"),
    )  # fmt: skip
    sa.Table(
        "t_payment", meta, key(),
        sa.Column("trans_number", sa.String(100), nullable=False),
        sa.Column("order_id", big_id, ref("order"), nullable=False),
        sa.Column("ts", when, nullable=False),
        sa.Column("hours", money, nullable=False),
        sa.Column("amount", money, nullable=False),
        sa.Column("payment_ts", when),
        sa.Column("cancel_ts", when),
        sa.Index("i_payment_number", "trans_number", unique=True),
    )  # fmt: skip
    sa.Table(
        "t_account", meta, key(),
        sa.Column("user_eid", sa.String(100), nullable=False),
        sa.Column("balance", money, nullable=False),
        sa.Column("reserved", money, nullable=False),
        sa.Index("i_account_user_eid", "user_eid", unique=True),
    )  # fmt: skip
    sa.Table(
        "t_account_receipt", meta, key(),
        sa.Column("ts", when, nullable=False),
        sa.Column("account_id", big_id, ref("account"), nullable=False, index=True),
        sa.Column("src_order_id", big_id, ref("order"), nullable=False, index=True),
        sa.Column("amount", money, nullable=False),
    )  # fmt: skip
    sa.Table(
        "t_account_consume", meta, key(),
        sa.Column("ts", when, nullable=False),
        sa.Column("account_id", big_id, ref("account"), nullable=False, index=True),
        sa.Column("dst_payment_id", big_id, ref("payment"), nullable=False, index=True),
        sa.Column("amount", money, nullable=False),
        sa.Column("is_reserved", sa.Integer, nullable=False),
    )  # fmt: skip
    sa.Table(
        "t_account_transfer", meta, key(),
        sa.Column("ts", when, nullable=False),
        sa.Column("trans_number", sa.String(100), nullable=False),
        sa.Column("src_account_id", big_id, ref("account"), nullable=False),
        sa.Column("dst_account_id", big_id, ref("account"), nullable=False),
        sa.Column("amount", money, nullable=False),
    )  # fmt: skip
    declared: MetaData = meta
    return declared


def create_parking_engine(url: str, *, echo_rows: bool = False) -> Engine:
    """An engine for the parking servers and the suite.

    The pool never resets a returned connection: every call ends in its own
    COMMIT or ROLLBACK, and a reset would send a second ROLLBACK that the
    database's own counters would see (the statement cross-check relies on
    them). On SQLite, transactions begin with an explicit ``BEGIN`` at the
    first statement (SQLAlchemy's recipe), as on the other databases,
    instead of the driver's own begin-before-writes-only habit.
    """
    sa = _import_sqlalchemy()
    target = sqlalchemy_url(url)
    options: dict[str, Any] = {"pool_reset_on_return": None}
    if target.startswith("mysql"):
        options["connect_args"] = {"charset": "utf8mb4"}
    try:
        engine: Engine = sa.create_engine(target, **options)
    except ImportError as error:
        raise UnavailableError(f"no driver for {target.split('://')[0]}: install stratabench[stores]") from error
    if engine.dialect.name == "sqlite":
        sa.event.listen(engine, "connect", _no_driver_transactions)
        sa.event.listen(engine, "begin", _begin)
    return engine


def _no_driver_transactions(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None


def _begin(connection: Any) -> None:
    connection.exec_driver_sql("BEGIN")


def recreate(engine: Engine) -> None:
    """Drop the parking tables (only those), create them and insert the seed lots."""
    meta = metadata()
    meta.drop_all(engine)
    meta.create_all(engine)
    product = tables()["product"]
    with engine.begin() as connection:
        connection.execute(
            product.insert(),
            [
                {"name": name, "display_name": display, "places_avail": places, "price": rate}
                for name, (display, places, rate) in SEED_LOTS.items()
            ],
        )


#: The database of the study's own on a PostgreSQL or MariaDB server named by the user.
OWN_DATABASE = "stratabench_parking"


def own_database(url: str) -> str:
    """The URL of a database of the study's own on the server of ``url`` (created if missing).

    :func:`recreate` drops the parking tables it finds, so the suite never
    runs it in a database that may hold a user's tables of the same names:
    on a server it works in ``stratabench_parking`` only. SQLite URLs are the
    suite's own files and come back unchanged.

    Raises
    ------
    StoreError
        When the server refuses the connection or the ``CREATE DATABASE``.
    """
    from urllib.parse import urlsplit, urlunsplit

    dialect = dialect_of(url)
    if dialect == "sqlite":
        return url
    sa = _import_sqlalchemy()
    engine = sa.create_engine(sqlalchemy_url(url), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            if dialect == "mysql":
                connection.exec_driver_sql(f"CREATE DATABASE IF NOT EXISTS {OWN_DATABASE}")
            elif connection.exec_driver_sql(f"SELECT 1 FROM pg_database WHERE datname = '{OWN_DATABASE}'").first() is None:
                connection.exec_driver_sql(f"CREATE DATABASE {OWN_DATABASE}")
    except sa.exc.SQLAlchemyError as error:
        from stratabench.errors import StoreError
        from stratabench.redact import redact

        reason = str(error.orig if getattr(error, "orig", None) else error).splitlines()[0]
        raise StoreError(f"{redact(url)}: cannot create the database {OWN_DATABASE}: {reason}") from None
    finally:
        engine.dispose()
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{OWN_DATABASE}", parts.query, parts.fragment))


def reseed_lots(engine: Engine) -> None:
    """Give the lots back their seed free places (stop_service leaks places, docs/studies/parking.md §9)."""
    sa = _import_sqlalchemy()
    product = tables()["product"]
    with engine.begin() as connection:
        for name, (_display, places, _rate) in SEED_LOTS.items():
            connection.execute(sa.update(product).where(product.c.name == name).values(places_avail=places))


def ddl(dialect_name: str) -> str:
    """The CREATE statements for one dialect (``sqlite``, ``postgresql``, ``mysql``)."""
    sa = _import_sqlalchemy()
    from sqlalchemy.schema import CreateIndex, CreateTable

    urls = {"sqlite": "sqlite://", "postgresql": "postgresql+psycopg://", "mysql": "mysql+pymysql://"}
    if dialect_name not in urls:
        raise UsageError(f"--ddl {dialect_name!r}: choose one of {', '.join(urls)}")
    dialect = sa.create_mock_engine(urls[dialect_name], lambda *_: None).dialect
    parts: list[str] = []
    for table in metadata().sorted_tables:
        parts.append(str(CreateTable(table).compile(dialect=dialect)).strip() + ";")
        parts.extend(str(CreateIndex(index).compile(dialect=dialect)).strip() + ";" for index in table.indexes)
    return "\n\n".join(parts) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m stratabench.systems.parking.schema``: recreate and seed a database, or print DDL."""
    parser = argparse.ArgumentParser(prog="python -m stratabench.systems.parking.schema", description=__doc__)
    parser.add_argument("url", nargs="?", help="database URL to recreate and seed")
    parser.add_argument("--ddl", metavar="DIALECT", help="print the DDL for sqlite, postgresql or mysql")
    args = parser.parse_args(argv)
    if args.ddl:
        sys.stdout.write(ddl(args.ddl))
    if args.url:
        engine = create_parking_engine(args.url)
        try:
            recreate(engine)
        finally:
            engine.dispose()
    return 0


if __name__ == "__main__":
    from stratabench.errors import StratabenchError

    try:
        sys.exit(main())
    except StratabenchError as failure:
        print(f"error: {failure.message}", file=sys.stderr)
        sys.exit(failure.exit_code)
