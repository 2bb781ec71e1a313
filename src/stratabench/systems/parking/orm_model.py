"""The parking domain as SQLAlchemy 2 mapped classes (``python-orm``'s model).

Mapped onto the tables of :mod:`.schema`, so both Python servers and the Go
servers share one schema; the relationships are those of the study's model
(a lot's orders, an order's payments and receipts, a payment's consumes, an
account's receipts and consumes, a transfer's two accounts), loaded lazily
as the study's were: those lazy loads are part of what docs/studies/parking.md §11.4 counts.
"""

from __future__ import annotations

import datetime
from decimal import Decimal

from sqlalchemy.orm import DeclarativeBase, Mapped, relationship

from stratabench.systems.parking.schema import tables

__all__ = ["Account", "AccountConsume", "AccountReceipt", "AccountTransfer", "Order", "Payment", "Product"]

_TABLES = tables()


class Base(DeclarativeBase):
    pass


class Product(Base):
    """A parking lot."""

    __table__ = _TABLES["product"]
    id: Mapped[int]
    name: Mapped[str]
    display_name: Mapped[str]
    places_avail: Mapped[int]
    price: Mapped[Decimal]


class Order(Base):
    """A parking session: prepaid (user and plate) or postpaid (ticket)."""

    __table__ = _TABLES["order"]
    id: Mapped[int]
    product_id: Mapped[int]
    user_eid: Mapped[str | None]
    ticket_number: Mapped[str | None]
    plate_number: Mapped[str | None]
    start_ts: Mapped[datetime.datetime]
    paid_until_ts: Mapped[datetime.datetime]
    finish_ts: Mapped[datetime.datetime | None]
    paid_amount: Mapped[Decimal]
    price: Mapped[Decimal | None]

    product: Mapped[Product] = relationship()


class Payment(Base):
    """One money movement towards an order: created, then paid and/or cancelled."""

    __table__ = _TABLES["payment"]
    id: Mapped[int]
    trans_number: Mapped[str]
    order_id: Mapped[int]
    ts: Mapped[datetime.datetime]
    hours: Mapped[Decimal]
    amount: Mapped[Decimal]
    payment_ts: Mapped[datetime.datetime | None]
    cancel_ts: Mapped[datetime.datetime | None]

    order: Mapped[Order] = relationship()
    consumes: Mapped[list[AccountConsume]] = relationship(back_populates="dst_payment")


class Account(Base):
    """A user's wallet: BALANCE holds all money, RESERVED the part promised to open payments."""

    __table__ = _TABLES["account"]
    id: Mapped[int]
    user_eid: Mapped[str]
    balance: Mapped[Decimal]
    reserved: Mapped[Decimal]


class AccountReceipt(Base):
    """A refund into a wallet."""

    __table__ = _TABLES["account_receipt"]
    id: Mapped[int]
    ts: Mapped[datetime.datetime]
    account_id: Mapped[int]
    src_order_id: Mapped[int]
    amount: Mapped[Decimal]

    account: Mapped[Account] = relationship()
    src_order: Mapped[Order] = relationship()


class AccountConsume(Base):
    """Money taken from a wallet towards a payment (reserved until the payment is confirmed)."""

    __table__ = _TABLES["account_consume"]
    id: Mapped[int]
    ts: Mapped[datetime.datetime]
    account_id: Mapped[int]
    dst_payment_id: Mapped[int]
    amount: Mapped[Decimal]
    is_reserved: Mapped[int]

    account: Mapped[Account] = relationship()
    dst_payment: Mapped[Payment] = relationship(back_populates="consumes")


class AccountTransfer(Base):
    """A whole wallet moved to another user's."""

    __table__ = _TABLES["account_transfer"]
    id: Mapped[int]
    ts: Mapped[datetime.datetime]
    trans_number: Mapped[str]
    src_account_id: Mapped[int]
    dst_account_id: Mapped[int]
    amount: Mapped[Decimal]

    src_account: Mapped[Account] = relationship(foreign_keys=[_TABLES["account_transfer"].c.src_account_id])
    dst_account: Mapped[Account] = relationship(foreign_keys=[_TABLES["account_transfer"].c.dst_account_id])
