"""What every parking server shares, whatever its data layer (docs/studies/parking.md §3–5).

The ten function names and their default statuses, the query-string
decoding of the Python reference server, the answer envelope, protocol
versions, the readers of ``service_descr`` values, and the quarter-hour
rule in integer minutes. A function signals a business answer by raising
:class:`Answer`; the HTTP front turns any other exception into the
function's default status (docs/studies/parking.md §3), so a malformed value can never
crash a server.
"""

from __future__ import annotations

import datetime
import re
import time
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any
from urllib.parse import unquote

__all__ = [
    "API_FUNCTIONS",
    "DEFAULT_STATUS",
    "Answer",
    "Internal",
    "ServiceDescr",
    "answer",
    "decode_query",
    "lookup_failure",
    "money",
    "now",
    "parse_decimal",
    "parse_int",
    "parse_version",
    "price_for",
    "refund_of",
    "refuse",
    "rounded_minutes",
    "text_of",
    "unix_ts",
    "whole_seconds",
]

#: Default status of each function: its answer to anything unexpected (docs/studies/parking.md §3).
DEFAULT_STATUS: dict[str, str] = {
    "get_service_info": "not_available",
    "create_reservation": "not_available",
    "issue_ticket": "not_available",
    "leave_parking": "not_available",
    "check_plate_number": "not_available",
    "pay_reservation": "bad_transaction",
    "cancel_reservation": "bad_transaction",
    "stop_service": "bad_transaction",
    "get_user_account": "bad_transaction",
    "account_transfer": "bad_transaction",
}

API_FUNCTIONS = tuple(DEFAULT_STATUS)

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")
_CENT = Decimal("0.01")


class Answer(Exception):
    """A business answer given early: the call's transaction is rolled back."""

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__(body.get("status"))
        self.body = body


class Internal(Exception):
    """A failed check that the study calls an internal error (docs/studies/parking.md §3): the default status, no ``status_code``."""


def answer(status: str, **fields: Any) -> dict[str, Any]:
    """The answer envelope: ``status``, the fields, and ``ts`` (Unix seconds, three decimals)."""
    fields["status"] = status
    fields["ts"] = f"{time.time():.3f}"
    return fields


def refuse(status: str, code: str | None = None) -> Answer:
    """An early answer with an optional ``status_code``."""
    return Answer(answer(status, status_code=code) if code else answer(status))


def decode_query(query: str) -> dict[str, str]:
    """The reference server's query decoding: ``+`` is a space, percent-escapes are UTF-8, last key wins."""
    params: dict[str, str] = {}
    for piece in query.split("&"):
        if not piece:
            continue
        key, _, value = piece.partition("=")
        params[unquote(key.replace("+", " "), errors="replace")] = unquote(value.replace("+", " "), errors="replace")
    return params


def parse_version(params: dict[str, str]) -> int:
    """The protocol version (absent = 0); anything but 0, 1, 2 answers ``bad_protocol``."""
    raw = params.get("version", "0")
    if not _INTEGER.fullmatch(raw) or int(raw) not in (0, 1, 2):
        raise Answer(answer("bad_protocol"))
    return int(raw)


def parse_int(value: Any) -> int:
    """An integer given as a JSON number or a decimal string; anything else is an internal error."""
    if isinstance(value, bool):
        raise Internal(f"not an integer: {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value)
    raise Internal(f"not an integer: {value!r}")


def parse_decimal(value: Any) -> Decimal:
    """An exact decimal from a string or a JSON number (never through a float)."""
    if isinstance(value, bool) or value is None:
        raise Internal(f"not a decimal: {value!r}")
    if isinstance(value, int):
        return Decimal(value)
    text = repr(value) if isinstance(value, float) else str(value).strip()
    if not _DECIMAL.fullmatch(text):
        raise Internal(f"not a decimal: {value!r}")
    try:
        return Decimal(text)
    except InvalidOperation as error:
        raise Internal(f"not a decimal: {value!r}") from error


def text_of(value: Any) -> str:
    """A ``service_descr`` or query value as the reference server reads it (``str()``; None is empty)."""
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        raise Internal("a nested value where a string is expected")
    return str(value)


class ServiceDescr:
    """The ``service_descr`` JSON object read in one protocol version's vocabulary (docs/studies/parking.md §4)."""

    def __init__(self, raw: Any, version: int) -> None:
        if not isinstance(raw, dict):
            raise Internal("service_descr is not a JSON object")
        self.raw = raw
        self.version = version

    @property
    def parking_name(self) -> str:
        return text_of(self.raw.get("parking_object_id" if self.version == 0 else "parking_id", ""))

    @property
    def plate(self) -> str:
        return text_of(self.raw.get("plate_number" if self.version == 0 else "registration_plate"))

    @property
    def has_ticket(self) -> bool:
        return "user_ticket" in self.raw

    @property
    def ticket(self) -> str:
        return text_of(self.raw.get("user_ticket"))

    def plate_for(self, *, reserve: bool) -> str | None:
        """The plate a call needs, or an early answer when it is required and missing (docs/studies/parking.md §7.1/7.2 step 2)."""
        if self.version == 0:
            if reserve and not self.has_ticket:
                if "plate_number" not in self.raw:
                    raise Internal("plate_number missing")
                return self.plate
            return None
        plate = self.plate
        if (self.version == 1 or reserve) and not plate:
            raise refuse("not_available", "invalid_registration_plate")
        return plate

    def check_parking_name(self) -> str:
        """The lot's name, refused when empty (an internal error for v0)."""
        name = self.parking_name
        if not name:
            raise lookup_failure(self.version, "invalid_parking_id")
        return name

    def prepaid_minutes(self) -> int:
        """Whole minutes asked for a prepaid quote: v0 ``hours`` (decimal), v1/v2 ``duration``."""
        if self.version == 0:
            if "hours" not in self.raw:
                raise Internal("hours missing")
            hours = parse_decimal(self.raw["hours"])
            minutes = int((hours * 60).to_integral_value(rounding="ROUND_FLOOR"))
            if minutes < 0:
                raise Internal("negative hours")
            return minutes
        raw = self.raw.get("duration")
        duration = parse_int(raw) if raw not in (None, "", 0) else 0
        if duration <= 0:
            raise refuse("not_available", "invalid_duration")
        return duration


def rounded_minutes(minutes: int, *, first_hour: bool) -> int:
    """The quarter-hour rule (docs/studies/parking.md §5.2) in integer minutes: up to a multiple of 15, first period charged."""
    if minutes < 0:
        raise Internal("negative duration")
    if minutes == 0 and first_hour:
        minutes = 1
    return (minutes + 14) // 15 * 15


def price_for(minutes: int, rate: Decimal) -> tuple[Decimal, Decimal]:
    """(rounded hours, price) for rounded minutes at an hourly rate, both exact."""
    hours = Decimal(minutes) / 60
    return hours, hours * rate


def money(value: Decimal) -> str:
    """Money as the answers write it: two decimals, half-to-even, exact."""
    return f"{value.quantize(_CENT, rounding=ROUND_HALF_EVEN):f}"


def refund_of(minutes: int, per_minute: Decimal) -> Decimal:
    """A refund rounded to cents, half-to-even (docs/studies/parking.md §7.5 step 5)."""
    return (minutes * per_minute).quantize(_CENT, rounding=ROUND_HALF_EVEN)


def now() -> datetime.datetime:
    """The application server's local time in whole seconds (every stored timestamp, docs/studies/parking.md §5.1)."""
    return datetime.datetime.now().replace(microsecond=0)


def unix_ts(moment: datetime.datetime) -> str:
    """A stored local time as the answers write it: Unix seconds with three decimals."""
    return f"{time.mktime(moment.timetuple()):.3f}"


def whole_seconds(delta: datetime.timedelta) -> int:
    """A time difference in whole seconds, fractions dropped (docs/studies/parking.md §5.1)."""
    return delta.days * 86400 + delta.seconds


def lookup_failure(version: int, code: str) -> Exception:
    """A failed input or lookup check: ``not_available`` with a code, or a plain internal error in v0."""
    if version == 0:
        return Internal(code)
    return refuse("not_available", code)
