"""The business rules both Python servers apply to the rows they read (docs/studies/parking.md §7).

A server reads and writes its rows its own way (mapped objects, Core
statements); what it decides from them is decided here, once: the
pre-checks of a quote, a reservation's terms, a quote's minutes and price,
the answers' shapes, the refund of stop_service, the grace period of
leave_parking.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from stratabench.systems.parking.protocol import Answer, Internal, ServiceDescr, answer, lookup_failure, money, now
from stratabench.systems.parking.protocol import parse_decimal, price_for, refund_of, refuse, rounded_minutes, text_of
from stratabench.systems.parking.protocol import unix_ts, whole_seconds

__all__ = [
    "Quote",
    "Reservation",
    "grace_over",
    "paid_time",
    "prepaid_quote",
    "quote_answer",
    "quote_request",
    "refund_for",
    "reservation_answer",
    "ticket_quote",
]

_ZERO = Decimal(0)


def quote_request(version: int, params: dict[str, Any], *, reserve: bool) -> tuple[Any, ServiceDescr, str | None]:
    """(user_id, service_descr, plate) after the checks that need no table (docs/studies/parking.md §7.1/7.2 steps 1-2)."""
    user_id = params.get("user_id")
    if version and not user_id:
        raise refuse("not_available", "invalid_user_id")
    descr = ServiceDescr(params.get("service_descr"), version)
    return user_id, descr, descr.plate_for(reserve=reserve)


@dataclass(frozen=True)
class Reservation:
    """A create_reservation call's price, the part paid from the wallet, and its transaction id."""

    price: Decimal
    from_balance: Decimal
    transaction_id: str

    @classmethod
    def read(cls, params: dict[str, Any]) -> Reservation:
        """docs/studies/parking.md §7.2 steps 4-5: a malformed price is an internal error, a bad split ``wrong_price``."""
        price = parse_decimal(params.get("price"))
        from_balance = parse_decimal(params["pay_from_balance"]) if params.get("pay_from_balance") else _ZERO
        if from_balance < 0 or from_balance > price:
            raise refuse("wrong_price")
        transaction_id = text_of(params.get("transaction_id"))
        if not 4 <= len(transaction_id) <= 64:
            raise refuse("bad_transaction")
        return cls(price, from_balance, transaction_id)


@dataclass(frozen=True)
class Quote:
    """Rounded minutes, rounded hours and the price they cost."""

    minutes: int
    hours: Decimal
    price: Decimal


def prepaid_quote(descr: ServiceDescr, rate: Decimal) -> Quote:
    """The price of the asked duration at the lot's rate, first period charged."""
    minutes = rounded_minutes(descr.prepaid_minutes(), first_hour=True)
    return Quote(minutes, *price_for(minutes, rate))


def ticket_quote(descr: ServiceDescr, *, lot_id: int, order_lot_id: int, finish_ts: datetime.datetime | None,
                 start_ts: datetime.datetime, paid_until_ts: datetime.datetime, rate: Decimal | None) -> Quote:  # fmt: skip
    """The price of a ticket's unpaid time at the rate copied onto its order (docs/studies/parking.md §7.1 step 4)."""
    if finish_ts is not None:
        raise lookup_failure(descr.version, "user_ticket_out_of_parking")
    if order_lot_id != lot_id:
        raise lookup_failure(descr.version, "user_ticket_not_found")
    if rate is None:
        raise Internal("a ticket order without a rate")
    current = now()
    unpaid = whole_seconds(current - paid_until_ts) if current > paid_until_ts else 0
    minutes = rounded_minutes(unpaid // 60, first_hour=paid_until_ts == start_ts)
    return Quote(minutes, *price_for(minutes, rate))


def quote_answer(version: int, *, places: int, quote: Quote, ticket_times: tuple[datetime.datetime, ...] | None,
                 balance: Decimal | None) -> Answer:  # fmt: skip
    """get_service_info's success, an early answer (a quote never writes); ``ticket_times`` = (start, paid until)."""
    info: dict[str, Any] = {"available_places": places}
    if version:
        info["start_ts"] = unix_ts(ticket_times[0] if ticket_times else now())
        info["duration"] = quote.minutes
        if ticket_times:
            info["paid_duration"] = whole_seconds(ticket_times[1] - ticket_times[0]) // 60
    if version >= 2:
        info["balance"] = money(balance if balance is not None else _ZERO)
    return Answer(answer("success", price=money(quote.price), info=info))


def reservation_answer(version: int, *, quote: Quote, start_ts: datetime.datetime, ticket: bool) -> dict[str, Any]:
    """create_reservation's success: the envelope, plus price and info from protocol 1 on."""
    body = answer("success")
    if version:
        body["price"] = money(quote.price)
        body["info"] = {"start_ts": unix_ts(start_ts), "duration": quote.minutes}
        if ticket:
            body["info"]["paid_duration"] = 0
    return body


def paid_time(hours: Decimal) -> datetime.timedelta:
    """The paid time a payment's hours add to (or take from) its order, in whole seconds."""
    return datetime.timedelta(seconds=int(hours * 3600))


def refund_for(*, paid_amount: Decimal, start_ts: datetime.datetime, paid_until_ts: datetime.datetime,
               current: datetime.datetime) -> Decimal:  # fmt: skip
    """stop_service's refund: unused whole quarter-hours at the paid price per minute (docs/studies/parking.md §7.5 step 5)."""
    seconds_left = whole_seconds(paid_until_ts - current) - 1
    per_minute = paid_amount / (whole_seconds(paid_until_ts - start_ts) // 60)
    refund = refund_of(seconds_left // 900 * 15, per_minute)
    if refund > paid_amount:
        raise Internal("refund above the paid amount")
    return refund


def grace_over(start_ts: datetime.datetime, paid_until_ts: datetime.datetime, current: datetime.datetime) -> bool:
    """leave_parking's refusal: never paid, or the 15 minutes after the paid time are over (docs/studies/parking.md §7.9)."""
    return start_ts == paid_until_ts or current >= paid_until_ts + datetime.timedelta(minutes=15)
