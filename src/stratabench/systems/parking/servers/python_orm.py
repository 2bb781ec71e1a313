"""``python-orm``: the parking service on SQLAlchemy 2's ORM, shaped as the study's server.

Mapped classes (:mod:`..orm_model`), one session and one transaction per
call, rows locked with ``SELECT … FOR UPDATE`` where docs/studies/parking.md §8 says,
related rows reached through lazy relationships, and changes written by the
unit of work when it flushes (before a query, at an explicit flush, at
commit). Written from the steps of docs/studies/parking.md §7 in order, so that on MariaDB it sends
the statements of section 11.4: lazy loads included, as an ORM user would
write it rather than as few statements as possible (that is ``python-core``).

Needs SQLAlchemy 2 (``stratabench[parking]``) and the database's driver.
"""

from __future__ import annotations

import datetime
import random
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from stratabench.systems.parking.orm_model import Account, AccountConsume, AccountReceipt, AccountTransfer, Order
from stratabench.systems.parking.orm_model import Payment, Product
from stratabench.systems.parking.protocol import Answer, Internal, ServiceDescr, answer, lookup_failure, money, now
from stratabench.systems.parking.protocol import refuse, text_of
from stratabench.systems.parking.rules import Quote, Reservation, grace_over, paid_time, prepaid_quote, quote_answer
from stratabench.systems.parking.rules import quote_request, refund_for, reservation_answer, ticket_quote
from stratabench.systems.parking.servers import SERVERS
from stratabench.systems.parking.servers.base import ParkingService, Params

if TYPE_CHECKING:
    from sqlalchemy import Engine

__all__ = ["PythonOrmService"]

_ZERO = Decimal(0)


@SERVERS.register("python-orm", requires=("sqlalchemy",), extra="parking")
class PythonOrmService(ParkingService):
    """SQLAlchemy 2 ORM: mapped classes, row locks, lazy relationships, one session per call."""

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self._sessions = sessionmaker(engine)

    @contextmanager
    def _transaction(self) -> Iterator[Session]:
        # Commits when the function returns, rolls back when it raises (an
        # early Answer included); a session that ran no statement sends neither.
        with self._sessions.begin() as session:
            yield session

    # -- lookups shared by several functions --------------------------------

    def _lot(self, session: Session, descr: ServiceDescr, *, lock: bool) -> Product:
        query = select(Product).filter_by(name=descr.check_parking_name())
        lots = session.scalars(query.with_for_update() if lock else query).all()
        if len(lots) != 1:
            raise lookup_failure(descr.version, "invalid_parking_id")
        return lots[0]

    def _quote(self, session: Session, descr: ServiceDescr, lot: Product, *, lock: bool) -> tuple[Quote, Order | None]:
        """The quote, and the ticket's order when there is one (docs/studies/parking.md §7.1 step 4)."""
        if not descr.has_ticket:
            return prepaid_quote(descr, lot.price), None
        query = select(Order).filter_by(ticket_number=descr.ticket)
        orders = session.scalars(query.with_for_update() if lock else query).all()
        if len(orders) != 1:
            raise lookup_failure(descr.version, "user_ticket_not_found")
        order = orders[0]
        # The order's lot comes through the relationship, from the identity map: the lot is loaded already.
        lot_id = lot.id if order.finish_ts is not None or order.product is lot else -1
        return ticket_quote(descr, lot_id=lot.id, order_lot_id=lot_id, finish_ts=order.finish_ts,
                            start_ts=order.start_ts, paid_until_ts=order.paid_until_ts, rate=order.price), order

    def _balance(self, session: Session, user_id: Any) -> Decimal:
        accounts = session.scalars(select(Account).filter_by(user_eid=user_id)).all()
        return accounts[0].balance if len(accounts) == 1 else _ZERO

    def _account(self, session: Session, user_id: Any) -> Account:
        """Lock the user's account, or create it and flush it at once (docs/studies/parking.md §7.11)."""
        accounts = session.scalars(select(Account).filter_by(user_eid=user_id).with_for_update()).all()
        if len(accounts) > 1:
            raise Internal("two accounts for one user")
        if accounts:
            return accounts[0]
        account = Account(user_eid=user_id, balance=_ZERO, reserved=_ZERO)
        session.add(account)
        session.flush()
        return account

    def _locked_payment(self, session: Session, params: Params) -> Payment:
        query = select(Payment).filter_by(trans_number=text_of(params.get("transaction_id"))).with_for_update()
        return session.scalars(query).one()

    def _locked_order(self, session: Session, payment: Payment) -> Order:
        return session.scalars(select(Order).filter_by(id=payment.order_id).with_for_update()).one()

    def _settle_consume(self, session: Session, payment: Payment, *, approve: bool) -> None:
        """Confirm (pay) or release (cancel) the wallet money reserved for a payment (7.3 step 6, 7.4 step 6)."""
        if len(payment.consumes) != 1:
            raise Internal("a payment with several consumes")
        consume = payment.consumes[0]
        account = consume.account
        session.refresh(account, with_for_update=True)
        session.refresh(consume, with_for_update=True)
        if account.reserved < consume.amount:
            raise Internal("reserved below the consume")
        account.reserved -= consume.amount
        if approve:
            if account.balance < consume.amount:
                raise Internal("balance below the consume")
            account.balance -= consume.amount
        else:
            consume.amount = _ZERO
        consume.is_reserved = 0
        session.flush()

    # -- the ten functions ---------------------------------------------------

    def get_service_info(self, version: int, params: Params) -> dict[str, Any]:
        user_id, descr, _plate = quote_request(version, params, reserve=False)
        with self._transaction() as session:
            lot = self._lot(session, descr, lock=False)
            quote, order = self._quote(session, descr, lot, lock=False)
            raise quote_answer(version, places=lot.places_avail, quote=quote,
                               ticket_times=(order.start_ts, order.paid_until_ts) if order else None,
                               balance=self._balance(session, user_id) if version >= 2 else None)  # fmt: skip

    def create_reservation(self, version: int, params: Params) -> dict[str, Any]:
        user_id, descr, plate = quote_request(version, params, reserve=True)
        with self._transaction() as session:
            lot = self._lot(session, descr, lock=True)
            terms = Reservation.read(params)
            query = select(Payment).filter_by(trans_number=terms.transaction_id).with_for_update()
            existing = session.scalars(query).all()
            if existing:
                if len(existing) == 1 and existing[0].amount == terms.price and existing[0].order.product is lot:
                    raise Answer(answer("success"))
                raise refuse("bad_transaction")
            quote, order = self._quote(session, descr, lot, lock=True)
            if terms.price != quote.price:
                raise refuse("wrong_price")
            if not lot.places_avail:
                raise refuse("not_available")
            current = now()
            if order is None:
                order = Order(product=lot, user_eid=user_id, plate_number=plate, start_ts=current,
                              paid_until_ts=current, paid_amount=_ZERO)  # fmt: skip
                session.add(order)
            payment = Payment(trans_number=terms.transaction_id, hours=quote.hours, order=order,
                              amount=quote.price - terms.from_balance, ts=current)  # fmt: skip
            session.add(payment)
            if terms.from_balance:
                self._reserve_from_wallet(session, user_id, payment, terms.from_balance, current)
            return reservation_answer(version, quote=quote, start_ts=order.start_ts, ticket=descr.has_ticket)

    def _reserve_from_wallet(
        self, session: Session, user_id: Any, payment: Payment, amount: Decimal, current: datetime.datetime
    ) -> None:
        account = self._account(session, user_id)
        if amount > account.balance - account.reserved:
            raise Internal("not enough money in the wallet")
        session.add(AccountConsume(account=account, dst_payment=payment, amount=amount, is_reserved=1, ts=current))
        account.reserved += amount
        payment.amount += amount
        session.flush()

    def pay_reservation(self, version: int, params: Params) -> dict[str, Any]:
        with self._transaction() as session:
            payment = self._locked_payment(session, params)
            if payment.payment_ts is not None:
                raise Answer(answer("success"))
            if payment.cancel_ts is not None:
                raise refuse("bad_transaction")
            order = self._locked_order(session, payment)
            current = now()
            payment.payment_ts = current
            payment.order.paid_amount += payment.amount
            payment.order.paid_until_ts += paid_time(payment.hours)
            if not order.ticket_number and current < order.paid_until_ts:
                session.refresh(order.product, with_for_update=True)
                order.product.places_avail -= 1
            if payment.consumes:
                self._settle_consume(session, payment, approve=True)
            return answer("success")

    def cancel_reservation(self, version: int, params: Params) -> dict[str, Any]:
        with self._transaction() as session:
            payment = self._locked_payment(session, params)
            if payment.cancel_ts is not None:
                raise Answer(answer("success"))
            order = self._locked_order(session, payment)
            current = now()
            payment.cancel_ts = current
            if payment.payment_ts is not None:
                payment.order.paid_amount -= payment.amount
                payment.order.paid_until_ts -= paid_time(payment.hours)
                if not order.ticket_number and current >= order.paid_until_ts:
                    order.finish_ts = current
                    session.refresh(order.product, with_for_update=True)
                    order.product.places_avail += 1
            else:
                order.finish_ts = current
            if payment.consumes:
                self._settle_consume(session, payment, approve=False)
            return answer("success")

    def stop_service(self, version: int, params: Params) -> dict[str, Any]:
        with self._transaction() as session:
            payment = self._locked_payment(session, params)
            if payment.payment_ts is None or payment.cancel_ts is not None:
                raise Internal("stop_service of a payment that is not paid, or cancelled")
            order = self._locked_order(session, payment)
            if order.ticket_number:
                raise Internal("stop_service of a ticket")
            receipts = session.scalars(select(AccountReceipt).filter_by(src_order_id=order.id)).all()
            if receipts:
                if len(receipts) != 1:
                    raise Internal("several receipts for one order")
                return answer("success", delta_amount=money(receipts[0].amount))
            current = now()
            if current >= order.paid_until_ts:
                return answer("success", delta_amount="0.00")
            refund = refund_for(paid_amount=order.paid_amount, start_ts=order.start_ts,
                                paid_until_ts=order.paid_until_ts, current=current)  # fmt: skip
            account = self._account(session, order.user_eid)
            session.add(AccountReceipt(account=account, src_order=order, amount=refund, ts=current))
            account.balance += refund
            order.paid_amount -= refund
            order.paid_until_ts = current
            session.flush()
            return answer("success", delta_amount=money(refund))

    def get_user_account(self, version: int, params: Params) -> dict[str, Any]:
        with self._transaction() as session:
            return answer("success", balance=money(self._balance(session, params.get("user_id"))))

    def account_transfer(self, version: int, params: Params) -> dict[str, Any]:
        with self._transaction() as session:
            source = self._account(session, params.get("src_user_id"))
            destination = self._account(session, params.get("dst_user_id"))
            if source is destination:
                raise refuse("bad_transaction", "same_src_and_dst")
            transaction_id = params.get("transaction_id")
            query = select(AccountTransfer).filter_by(trans_number=transaction_id).with_for_update()
            existing = session.scalars(query).all()
            if existing:
                if existing[0].src_account is not source or existing[0].dst_account is not destination:
                    raise refuse("bad_transaction", "another_trans_exists")
                raise refuse("success", "already_done")
            if source.balance <= 0:
                raise refuse("success", "nothing_to_transfer")
            if source.reserved != 0:
                raise refuse("not_available", "reserved_funds_present")
            amount = source.balance
            session.add(AccountTransfer(ts=now(), trans_number=transaction_id, src_account=source,
                                        dst_account=destination, amount=amount))  # fmt: skip
            source.balance -= amount
            destination.balance += amount
            return answer("success")

    def issue_ticket(self, version: int, params: Params) -> dict[str, Any]:
        name = text_of(params.get("parking_id"))
        if not name:
            raise Internal("parking_id missing")
        with self._transaction() as session:
            lot = session.scalars(select(Product).filter_by(name=name).with_for_update()).one()
            if lot.places_avail <= 0:
                raise Internal("no free place")
            while True:
                ticket = str(random.randint(1_000_000_000, 1_999_999_999))
                taken = session.scalar(select(func.count()).select_from(Order).filter_by(ticket_number=ticket))
                if not taken:
                    break
            current = now()
            session.add(Order(product=lot, ticket_number=ticket, start_ts=current, paid_until_ts=current,
                              price=lot.price, paid_amount=_ZERO))  # fmt: skip
            lot.places_avail -= 1
            return answer("success", user_ticket=ticket, available_places=lot.places_avail)

    def leave_parking(self, version: int, params: Params) -> dict[str, Any]:
        current = now()
        with self._transaction() as session:
            lot = session.scalars(select(Product).filter_by(name=text_of(params.get("parking_id")))).one()
            query = select(Order).where(
                Order.ticket_number == text_of(params.get("user_ticket")),
                Order.product == lot,
                Order.finish_ts.is_(None),
            )
            orders = session.scalars(query.with_for_update()).all()
            if len(orders) != 1:
                raise Internal("no single open order for the ticket")
            order = orders[0]
            if grace_over(order.start_ts, order.paid_until_ts, current):
                raise refuse("not_enough_paid")
            order.finish_ts = current
            session.refresh(lot, with_for_update=True)
            lot.places_avail += 1
            return answer("success")

    def check_plate_number(self, version: int, params: Params) -> dict[str, Any]:
        plate = text_of(params.get("registration_plate"))
        if not plate:
            raise Internal("registration_plate missing")
        with self._transaction() as session:
            query = select(func.count()).select_from(Order).where(
                Order.plate_number == plate, Order.paid_until_ts > now(), Order.finish_ts.is_(None)
            )
            active = session.scalar(query) or 0
            raise Answer(answer("success", paid="true" if active >= 1 else "false"))
