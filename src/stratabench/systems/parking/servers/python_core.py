"""``python-core``: the parking service on SQLAlchemy Core, the same transactions with the fewest statements.

No ORM: every statement is built once at start-up with bound parameters
(SQLAlchemy then only looks its compiled form up in its cache), rows come
back as tuples, and the server keeps one connection open — it serves one
request at a time. Each call is still one transaction that commits or rolls
back exactly where ``python-orm``'s does, and locks the same rows, but it
reads a payment with its order in one locked join, changes counters in SQL
(``places_avail = places_avail - 1``) instead of re-reading the row, never
loads a relation lazily, and reads a wallet's balance in the lot's query.
docs/studies/parking.md §11.4 asks to report such a server's counts beside the ORM's rather
than force them to match.

Needs SQLAlchemy 2 (``stratabench[parking]``) and the database's driver.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, CursorResult, bindparam, func, insert, select, update

from stratabench.systems.parking.protocol import Answer, Internal, ServiceDescr, answer, lookup_failure, money, now
from stratabench.systems.parking.protocol import refuse, text_of
from stratabench.systems.parking.rules import Quote, Reservation, grace_over, paid_time, prepaid_quote, quote_answer
from stratabench.systems.parking.rules import quote_request, refund_for, reservation_answer, ticket_quote
from stratabench.systems.parking.schema import tables
from stratabench.systems.parking.servers import SERVERS
from stratabench.systems.parking.servers.base import ParkingService, Params

if TYPE_CHECKING:
    from sqlalchemy import Engine

__all__ = ["PythonCoreService"]

_ZERO = Decimal(0)
#: A result row read by attribute (``row.places_avail``); SQLAlchemy's own Row type is generic per query.
_Row = Any


def _new_id(result: CursorResult[Any]) -> int:
    """The primary key an INSERT just created."""
    key = result.inserted_primary_key
    if key is None or key[0] is None:
        raise Internal("the database returned no id for an insert")
    return int(key[0])


class _Statements:
    """Every statement the server sends, built once."""

    def __init__(self) -> None:
        t = tables()
        lot, order, payment, account = t["product"], t["order"], t["payment"], t["account"]
        receipt, consume, transfer = t["account_receipt"], t["account_consume"], t["account_transfer"]
        money_type = payment.c.amount.type
        when = order.c.start_ts.type

        def amount(name: str) -> Any:
            return bindparam(name, type_=money_type)

        balance = select(account.c.balance).where(account.c.user_eid == bindparam("user")).scalar_subquery()
        self.lot_with_balance = select(lot.c.id, lot.c.places_avail, lot.c.price, balance).where(
            lot.c.name == bindparam("name")
        )
        self.lot_locked = select(lot.c.id, lot.c.places_avail, lot.c.price).where(
            lot.c.name == bindparam("name")).with_for_update()  # fmt: skip
        ticket_columns = (order.c.id, order.c.product_id, order.c.start_ts, order.c.paid_until_ts,
                          order.c.finish_ts, order.c.price)  # fmt: skip
        self.ticket = select(*ticket_columns).where(order.c.ticket_number == bindparam("ticket"))
        self.ticket_locked = self.ticket.with_for_update()
        self.payment_and_order_locked = (
            select(payment.c.id, payment.c.order_id, payment.c.hours, payment.c.amount, payment.c.payment_ts,
                   payment.c.cancel_ts, order.c.ticket_number, order.c.start_ts, order.c.paid_until_ts,
                   order.c.paid_amount, order.c.product_id, order.c.user_eid)  # fmt: skip
            .select_from(payment.join(order))
            .where(payment.c.trans_number == bindparam("trans"))
            .with_for_update()
        )
        self.insert_order = insert(order)
        self.insert_payment = insert(payment)
        self.account_locked = select(account.c.id, account.c.balance, account.c.reserved).where(
            account.c.user_eid == bindparam("user")).with_for_update()  # fmt: skip
        self.accounts_locked = select(account.c.id, account.c.user_eid, account.c.balance, account.c.reserved).where(
            account.c.user_eid.in_(bindparam("users", expanding=True))).with_for_update()  # fmt: skip
        self.balance = select(account.c.balance).where(account.c.user_eid == bindparam("user"))
        self.insert_account = insert(account)
        self.reserve = update(account).where(account.c.id == bindparam("account")).values(
            reserved=account.c.reserved + amount("delta"))  # fmt: skip
        self.add_balance = update(account).where(account.c.id == bindparam("account")).values(
            balance=account.c.balance + amount("delta"))  # fmt: skip
        self.settle = update(account).where(
            account.c.id == bindparam("account"), account.c.reserved >= amount("reserved_delta"),
            account.c.balance >= amount("balance_delta"),
        ).values(reserved=account.c.reserved - amount("reserved_delta"),
                 balance=account.c.balance - amount("balance_delta"))  # fmt: skip
        self.insert_consume = insert(consume)
        self.consumes_locked = select(consume.c.id, consume.c.account_id, consume.c.amount).where(
            consume.c.dst_payment_id == bindparam("payment")).with_for_update()  # fmt: skip
        self.close_consume = update(consume).where(consume.c.id == bindparam("consume")).values(
            is_reserved=0, amount=amount("amount"))  # fmt: skip
        self.shift_order = update(order).where(order.c.id == bindparam("order")).values(
            paid_amount=order.c.paid_amount + amount("delta"), paid_until_ts=bindparam("until", type_=when))
        self.shift_and_finish_order = self.shift_order.values(finish_ts=bindparam("finish", type_=when))
        self.finish_order = update(order).where(order.c.id == bindparam("order")).values(
            finish_ts=bindparam("finish", type_=when))  # fmt: skip
        self.mark_paid = update(payment).where(payment.c.id == bindparam("payment")).values(
            payment_ts=bindparam("at", type_=when))
        self.mark_cancelled = update(payment).where(payment.c.id == bindparam("payment")).values(
            cancel_ts=bindparam("at", type_=when))
        self.places = update(lot).where(lot.c.id == bindparam("lot")).values(
            places_avail=lot.c.places_avail + bindparam("delta"))  # fmt: skip
        self.receipts = select(receipt.c.amount).where(receipt.c.src_order_id == bindparam("order"))
        self.insert_receipt = insert(receipt)
        self.transfers_locked = select(transfer.c.src_account_id, transfer.c.dst_account_id).where(
            transfer.c.trans_number == bindparam("trans")).with_for_update()  # fmt: skip
        self.insert_transfer = insert(transfer)
        self.ticket_taken = select(func.count()).select_from(order).where(order.c.ticket_number == bindparam("ticket"))
        self.open_ticket_locked = (
            select(order.c.id, order.c.start_ts, order.c.paid_until_ts, order.c.product_id)
            .select_from(order.join(lot))
            .where(lot.c.name == bindparam("name"), order.c.ticket_number == bindparam("ticket"),
                   order.c.finish_ts.is_(None))  # fmt: skip
            .with_for_update()
        )
        self.active_plate = select(func.count()).select_from(order).where(
            order.c.plate_number == bindparam("plate"), order.c.paid_until_ts > bindparam("now", type_=when),
            order.c.finish_ts.is_(None))  # fmt: skip
        self.stop_order = update(order).where(order.c.id == bindparam("order")).values(
            paid_amount=order.c.paid_amount - amount("refund"), paid_until_ts=bindparam("until", type_=when))  # fmt: skip


@SERVERS.register("python-core", requires=("sqlalchemy",), extra="parking")
class PythonCoreService(ParkingService):
    """SQLAlchemy Core without an ORM: prebuilt statements, one open connection, fewest statements."""

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self._sql = _Statements()
        self._connection = engine.connect()

    def close(self) -> None:
        self._connection.close()

    @contextmanager
    def _transaction(self) -> Iterator[Connection]:
        with self._connection.begin():
            yield self._connection

    # -- shared steps --------------------------------------------------------

    def _one_lot(self, rows: Sequence[_Row], descr: ServiceDescr) -> _Row:
        if len(rows) != 1:
            raise lookup_failure(descr.version, "invalid_parking_id")
        return rows[0]

    def _quote(self, db: Connection, descr: ServiceDescr, lot: _Row, *, lock: bool) -> tuple[Quote, _Row | None]:
        """The quote, and the ticket's order row when there is one (docs/studies/parking.md §7.1 step 4)."""
        if not descr.has_ticket:
            return prepaid_quote(descr, lot.price), None
        rows = db.execute(self._sql.ticket_locked if lock else self._sql.ticket, {"ticket": descr.ticket}).all()
        if len(rows) != 1:
            raise lookup_failure(descr.version, "user_ticket_not_found")
        order = rows[0]
        return ticket_quote(descr, lot_id=lot.id, order_lot_id=order.product_id, finish_ts=order.finish_ts,
                            start_ts=order.start_ts, paid_until_ts=order.paid_until_ts, rate=order.price), order

    def _locked_account(self, db: Connection, user_id: Any) -> _Row | None:
        rows = db.execute(self._sql.account_locked, {"user": user_id}).all()
        if len(rows) > 1:
            raise Internal("two accounts for one user")
        return rows[0] if rows else None

    def _release_consume(self, db: Connection, payment_id: int, *, approve: bool) -> None:
        """Confirm (pay) or release (cancel) the wallet money reserved for a payment, if any."""
        consumes = db.execute(self._sql.consumes_locked, {"payment": payment_id}).all()
        if not consumes:
            return
        if len(consumes) != 1:
            raise Internal("a payment with several consumes")
        consume = consumes[0]
        settled = db.execute(self._sql.settle, {"account": consume.account_id, "reserved_delta": consume.amount,
                                                "balance_delta": consume.amount if approve else _ZERO})  # fmt: skip
        if settled.rowcount != 1:
            raise Internal("the wallet holds less than the consume")
        db.execute(self._sql.close_consume, {"consume": consume.id, "amount": consume.amount if approve else _ZERO})

    def _locked_payment(self, db: Connection, params: Params) -> _Row:
        rows = db.execute(self._sql.payment_and_order_locked, {"trans": text_of(params.get("transaction_id"))}).all()
        if len(rows) != 1:
            raise Internal("no single payment with that transaction id")
        return rows[0]

    # -- the ten functions ---------------------------------------------------

    def get_service_info(self, version: int, params: Params) -> dict[str, Any]:
        user_id, descr, _plate = quote_request(version, params, reserve=False)
        with self._transaction() as db:
            rows = db.execute(self._sql.lot_with_balance, {"name": descr.check_parking_name(), "user": user_id}).all()
            lot = self._one_lot(rows, descr)
            quote, order = self._quote(db, descr, lot, lock=False)
            raise quote_answer(version, places=lot.places_avail, quote=quote,
                               ticket_times=(order.start_ts, order.paid_until_ts) if order else None,
                               balance=lot[3])  # fmt: skip

    def create_reservation(self, version: int, params: Params) -> dict[str, Any]:
        user_id, descr, plate = quote_request(version, params, reserve=True)
        with self._transaction() as db:
            lot = self._one_lot(db.execute(self._sql.lot_locked, {"name": descr.check_parking_name()}).all(), descr)
            terms = Reservation.read(params)
            transaction_id, from_balance = terms.transaction_id, terms.from_balance
            existing = db.execute(self._sql.payment_and_order_locked, {"trans": transaction_id}).all()
            if existing:
                if len(existing) == 1 and existing[0].amount == terms.price and existing[0].product_id == lot.id:
                    raise Answer(answer("success"))
                raise refuse("bad_transaction")
            quote, ticket_order = self._quote(db, descr, lot, lock=True)
            if terms.price != quote.price:
                raise refuse("wrong_price")
            if not lot.places_avail:
                raise refuse("not_available")
            current = now()
            if ticket_order is None:
                inserted = db.execute(self._sql.insert_order, {
                    "product_id": lot.id, "user_eid": user_id, "plate_number": plate, "start_ts": current,
                    "paid_until_ts": current, "paid_amount": _ZERO})  # fmt: skip
                order_id, start_ts = _new_id(inserted), current
            else:
                order_id, start_ts = ticket_order.id, ticket_order.start_ts
            # The payment holds its full amount from the start: no second write when the wallet pays a part.
            payment = db.execute(self._sql.insert_payment, {"trans_number": transaction_id, "order_id": order_id,
                                                            "ts": current, "hours": quote.hours,
                                                            "amount": quote.price})  # fmt: skip
            if from_balance:
                account = self._locked_account(db, user_id)
                if account is None or from_balance > account.balance - account.reserved:
                    raise Internal("not enough money in the wallet")
                db.execute(self._sql.reserve, {"account": account.id, "delta": from_balance})
                db.execute(self._sql.insert_consume, {"ts": current, "account_id": account.id, "amount": from_balance,
                                                      "dst_payment_id": _new_id(payment),
                                                      "is_reserved": 1})  # fmt: skip
            return reservation_answer(version, quote=quote, start_ts=start_ts, ticket=descr.has_ticket)

    def pay_reservation(self, version: int, params: Params) -> dict[str, Any]:
        with self._transaction() as db:
            row = self._locked_payment(db, params)
            if row.payment_ts is not None:
                raise Answer(answer("success"))
            if row.cancel_ts is not None:
                raise refuse("bad_transaction")
            current = now()
            until = row.paid_until_ts + paid_time(row.hours)
            db.execute(self._sql.shift_order, {"order": row.order_id, "delta": row.amount, "until": until})
            db.execute(self._sql.mark_paid, {"payment": row.id, "at": current})
            if not row.ticket_number and current < until:
                db.execute(self._sql.places, {"lot": row.product_id, "delta": -1})
            self._release_consume(db, row.id, approve=True)
            return answer("success")

    def cancel_reservation(self, version: int, params: Params) -> dict[str, Any]:
        with self._transaction() as db:
            row = self._locked_payment(db, params)
            if row.cancel_ts is not None:
                raise Answer(answer("success"))
            current = now()
            db.execute(self._sql.mark_cancelled, {"payment": row.id, "at": current})
            if row.payment_ts is not None:
                until = row.paid_until_ts - paid_time(row.hours)
                frees_place = not row.ticket_number and current >= until
                shift = {"order": row.order_id, "delta": -row.amount, "until": until}
                if frees_place:
                    db.execute(self._sql.shift_and_finish_order, {**shift, "finish": current})
                    db.execute(self._sql.places, {"lot": row.product_id, "delta": 1})
                else:
                    db.execute(self._sql.shift_order, shift)
            else:
                db.execute(self._sql.finish_order, {"order": row.order_id, "finish": current})
            self._release_consume(db, row.id, approve=False)
            return answer("success")

    def stop_service(self, version: int, params: Params) -> dict[str, Any]:
        with self._transaction() as db:
            row = self._locked_payment(db, params)
            if row.payment_ts is None or row.cancel_ts is not None:
                raise Internal("stop_service of a payment that is not paid, or cancelled")
            if row.ticket_number:
                raise Internal("stop_service of a ticket")
            receipts = db.execute(self._sql.receipts, {"order": row.order_id}).all()
            if receipts:
                if len(receipts) != 1:
                    raise Internal("several receipts for one order")
                return answer("success", delta_amount=money(receipts[0].amount))
            current = now()
            if current >= row.paid_until_ts:
                return answer("success", delta_amount="0.00")
            refund = refund_for(paid_amount=row.paid_amount, start_ts=row.start_ts, paid_until_ts=row.paid_until_ts,
                                current=current)  # fmt: skip
            account = self._locked_account(db, row.user_eid)
            if account is None:
                inserted = db.execute(self._sql.insert_account, {"user_eid": row.user_eid, "balance": refund,
                                                                 "reserved": _ZERO})  # fmt: skip
                account_id = _new_id(inserted)
            else:
                account_id = account.id
                db.execute(self._sql.add_balance, {"account": account_id, "delta": refund})
            db.execute(self._sql.stop_order, {"order": row.order_id, "refund": refund, "until": current})
            db.execute(self._sql.insert_receipt, {"ts": current, "account_id": account_id,
                                                  "src_order_id": row.order_id, "amount": refund})  # fmt: skip
            return answer("success", delta_amount=money(refund))

    def get_user_account(self, version: int, params: Params) -> dict[str, Any]:
        with self._transaction() as db:
            rows = db.execute(self._sql.balance, {"user": params.get("user_id")}).all()
            return answer("success", balance=money(rows[0].balance if len(rows) == 1 else _ZERO))

    def account_transfer(self, version: int, params: Params) -> dict[str, Any]:
        source_user, destination_user = params.get("src_user_id"), params.get("dst_user_id")
        if source_user is None or destination_user is None:
            raise Internal("src_user_id and dst_user_id are required")
        with self._transaction() as db:
            found = {row.user_eid: row for row in db.execute(self._sql.accounts_locked,
                                                              {"users": [source_user, destination_user]})}  # fmt: skip
            if source_user == destination_user:
                raise refuse("bad_transaction", "same_src_and_dst")
            source, destination = found.get(source_user), found.get(destination_user)
            transaction_id = params.get("transaction_id")
            if transaction_id is None:
                raise Internal("transaction_id missing")
            existing = db.execute(self._sql.transfers_locked, {"trans": transaction_id}).all()
            if existing:
                if (existing[0].src_account_id, existing[0].dst_account_id) != (
                        source.id if source else None, destination.id if destination else None):  # fmt: skip
                    raise refuse("bad_transaction", "another_trans_exists")
                raise refuse("success", "already_done")
            if source is None or source.balance <= 0:
                raise refuse("success", "nothing_to_transfer")
            if source.reserved != 0:
                raise refuse("not_available", "reserved_funds_present")
            amount = source.balance
            if destination is None:
                inserted = db.execute(self._sql.insert_account, {"user_eid": destination_user, "balance": amount,
                                                                 "reserved": _ZERO})  # fmt: skip
                destination_id = _new_id(inserted)
            else:
                destination_id = destination.id
                db.execute(self._sql.add_balance, {"account": destination_id, "delta": amount})
            db.execute(self._sql.add_balance, {"account": source.id, "delta": -amount})
            db.execute(self._sql.insert_transfer, {"ts": now(), "trans_number": transaction_id,
                                                   "src_account_id": source.id, "dst_account_id": destination_id,
                                                   "amount": amount})  # fmt: skip
            return answer("success")

    def issue_ticket(self, version: int, params: Params) -> dict[str, Any]:
        name = text_of(params.get("parking_id"))
        if not name:
            raise Internal("parking_id missing")
        with self._transaction() as db:
            rows = db.execute(self._sql.lot_locked, {"name": name}).all()
            if len(rows) != 1 or rows[0].places_avail <= 0:
                raise Internal("no such lot, or no free place")
            lot = rows[0]
            while True:
                ticket = str(random.randint(1_000_000_000, 1_999_999_999))
                if not db.execute(self._sql.ticket_taken, {"ticket": ticket}).scalar():
                    break
            current = now()
            db.execute(self._sql.places, {"lot": lot.id, "delta": -1})
            db.execute(self._sql.insert_order, {"product_id": lot.id, "ticket_number": ticket, "start_ts": current,
                                                "paid_until_ts": current, "price": lot.price,
                                                "paid_amount": _ZERO})  # fmt: skip
            return answer("success", user_ticket=ticket, available_places=lot.places_avail - 1)

    def leave_parking(self, version: int, params: Params) -> dict[str, Any]:
        current = now()
        with self._transaction() as db:
            rows = db.execute(self._sql.open_ticket_locked, {"name": text_of(params.get("parking_id")),
                                                             "ticket": text_of(params.get("user_ticket"))}).all()  # fmt: skip
            if len(rows) != 1:
                raise Internal("no single open order for the ticket")
            order = rows[0]
            if grace_over(order.start_ts, order.paid_until_ts, current):
                raise refuse("not_enough_paid")
            db.execute(self._sql.finish_order, {"order": order.id, "finish": current})
            db.execute(self._sql.places, {"lot": order.product_id, "delta": 1})
            return answer("success")

    def check_plate_number(self, version: int, params: Params) -> dict[str, Any]:
        plate = text_of(params.get("registration_plate"))
        if not plate:
            raise Internal("registration_plate missing")
        with self._transaction() as db:
            active = db.execute(self._sql.active_plate, {"plate": plate, "now": now()}).scalar() or 0
            raise Answer(answer("success", paid="true" if active >= 1 else "false"))
