"""The invariants of spec section 9, checked on the database itself, and snapshots of its rows.

:func:`violations` reads every parking table and lists what breaks the
lifecycles: wallets whose balance is not the sum of their movements or whose
reserved part is not the sum of their open consumes, orders whose paid
amount is not their paid payments less their refunds, impossible payment
states, free-place counters outside their range. :func:`snapshot` takes every
row, so a test can show that refused calls changed nothing.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from stratabench.suites.parking.schema import SEED_LOTS, tables

if TYPE_CHECKING:
    from sqlalchemy import Engine

__all__ = ["snapshot", "violations"]

_QUARTER = Decimal("0.25")


def snapshot(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every parking table, ordered by id."""
    with engine.connect() as connection:
        return {
            name: [tuple(row) for row in connection.execute(table.select().order_by(table.c.id))]
            for name, table in tables().items()
        }


def violations(engine: Engine) -> list[str]:
    """Every broken invariant, one line each (empty when the database is consistent)."""
    with engine.connect() as connection:
        rows = {name: connection.execute(table.select()).mappings().all() for name, table in tables().items()}
    problems: list[str] = []
    _check_lots(rows["product"], problems)
    _check_payments(rows["payment"], rows["order"], rows["account_receipt"], problems)
    _check_wallets(rows["account"], rows["account_receipt"], rows["account_consume"], rows["account_transfer"],
                   problems)  # fmt: skip
    return problems


def _check_lots(lots: Any, problems: list[str]) -> None:
    for lot in lots:
        seed = SEED_LOTS.get(lot["name"])
        ceiling = seed[1] if seed else None
        if lot["places_avail"] < 0 or (ceiling is not None and lot["places_avail"] > ceiling):
            problems.append(f"lot {lot['name']}: {lot['places_avail']} free places, outside 0..{ceiling}")


def _check_payments(payments: Any, orders: Any, receipts: Any, problems: list[str]) -> None:
    paid: dict[int, Decimal] = defaultdict(Decimal)
    for payment in payments:
        if payment["amount"] < 0:
            problems.append(f"payment {payment['trans_number']}: negative amount {payment['amount']}")
        if payment["hours"] < 0 or payment["hours"] % _QUARTER:
            problems.append(f"payment {payment['trans_number']}: {payment['hours']} h is not whole quarter-hours")
        if payment["payment_ts"] is not None and payment["cancel_ts"] is None:
            paid[payment["order_id"]] += payment["amount"]
    refunded: dict[int, Decimal] = defaultdict(Decimal)
    for receipt in receipts:
        refunded[receipt["src_order_id"]] += receipt["amount"]
    for order in orders:
        expected = paid[order["id"]] - refunded[order["id"]]
        if order["paid_amount"] != expected:
            problems.append(f"order {order['id']}: paid_amount {order['paid_amount']}, payments less refunds {expected}")
        if order["paid_until_ts"] < order["start_ts"] and order["ticket_number"] is None:
            problems.append(f"order {order['id']}: paid until before its start")
        if (order["ticket_number"] is None) == (order["user_eid"] is None and order["plate_number"] is None):
            problems.append(f"order {order['id']}: neither or both of a ticket and a user's plate")


def _check_wallets(accounts: Any, receipts: Any, consumes: Any, transfers: Any, problems: list[str]) -> None:
    balance: dict[int, Decimal] = defaultdict(Decimal)
    reserved: dict[int, Decimal] = defaultdict(Decimal)
    for receipt in receipts:
        balance[receipt["account_id"]] += receipt["amount"]
    for consume in consumes:
        if consume["is_reserved"]:
            reserved[consume["account_id"]] += consume["amount"]
        else:
            balance[consume["account_id"]] -= consume["amount"]  # confirmed; a cancelled one holds 0
    for transfer in transfers:
        balance[transfer["src_account_id"]] -= transfer["amount"]
        balance[transfer["dst_account_id"]] += transfer["amount"]
    users: set[str] = set()
    for account in accounts:
        name = f"wallet of {account['user_eid']!r}"
        if account["user_eid"] in users:
            problems.append(f"{name}: two accounts")
        users.add(account["user_eid"])
        if not 0 <= account["reserved"] <= account["balance"]:
            problems.append(f"{name}: reserved {account['reserved']} outside 0..balance {account['balance']}")
        if account["balance"] != balance[account["id"]]:
            problems.append(f"{name}: balance {account['balance']}, movements add up to {balance[account['id']]}")
        if account["reserved"] != reserved[account["id"]]:
            problems.append(f"{name}: reserved {account['reserved']}, open consumes {reserved[account['id']]}")
