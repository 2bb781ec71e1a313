"""The invariants of docs/studies/parking.md §9, checked on the database itself, and snapshots of its rows.

:func:`violations` reads every parking table and lists what breaks the
lifecycles: wallets whose balance is not the sum of their movements or whose
reserved part is not the sum of their open consumes, orders whose paid
amount is not their paid payments less their refunds, impossible payment
states, free-place counters outside their range, and, for lots whose first
count is given, places taken that are not the orders holding a place.
:func:`snapshot` takes every row, so a test can show that refused calls
changed nothing.

An order holds a place (docs/studies/parking.md §7.3 to 7.9) while it is open and is a
ticket order (issue_ticket took the place, leave_parking frees it), or a
prepaid order with a paid payment not cancelled (pay_reservation took it,
cancelling closes the order and frees it; stop_service refunds but keeps
both the order open and the place, the leak of docs/studies/parking.md §9). One path breaks
the count on purpose of the original: cancelling a ticket's *unpaid*
payment closes its order without freeing the place (7.4 step 5), so a lot
where that happened is reported.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from stratabench.systems.parking.schema import SEED_LOTS, tables

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


def violations(engine: Engine, places: Mapping[str, int] | None = None) -> list[str]:
    """Every broken invariant, one line each (empty when the database is consistent).

    ``places`` gives lots (by name) their free places before the run; each
    is then checked exactly: places taken equal the orders holding one (see
    the module docstring). Lots not named, such as the seed lots re-seeded
    between batches, are only checked to be within range.
    """
    with engine.connect() as connection:
        rows = {name: connection.execute(table.select()).mappings().all() for name, table in tables().items()}
    problems: list[str] = []
    _check_lots(rows["product"], problems)
    if places:
        _check_places(rows["product"], rows["order"], rows["payment"], places, problems)
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


def _check_places(lots: Any, orders: Any, payments: Any, places: Mapping[str, int], problems: list[str]) -> None:
    paid_orders = {p["order_id"] for p in payments if p["payment_ts"] is not None and p["cancel_ts"] is None}
    holding: Counter[int] = Counter(
        order["product_id"] for order in orders
        if order["finish_ts"] is None and (order["ticket_number"] is not None or order["id"] in paid_orders)
    )  # fmt: skip
    for lot in lots:
        if lot["name"] in places:
            taken = places[lot["name"]] - lot["places_avail"]
            if taken != holding[lot["id"]]:
                problems.append(f"lot {lot['name']}: {taken} places taken, {holding[lot['id']]} orders hold one")


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
