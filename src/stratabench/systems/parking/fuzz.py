"""A batch of malformed calls, and the answers docs/studies/parking.md §3 allows for each.

Unknown functions and a ``service_descr`` that is not JSON must answer HTTP
500 ``Internal server error``; a wrong ``version`` must answer
``bad_protocol``; every other malformed value (wrong JSON shapes, huge or
non-numeric numbers, SQL metacharacters, undecodable escapes, kilobytes of
text) must answer HTTP 200 with one of the statuses the function can give
for a refused call — and none of these calls may change a row. Only calls
that could never be legitimate are sent, so a server that wrote anything
has a bug; :mod:`.invariants` checks the database afterwards.

``python -m stratabench.systems.parking.fuzz http://127.0.0.1:PORT/`` runs
the batch against any server and prints each wrong answer.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote, urlencode

from stratabench.systems.parking.driver import Exchange, ParkingClient

__all__ = ["FuzzCase", "fuzz_cases", "run_fuzz"]

_INTERNAL = "internal"  # expected: HTTP 500 "Internal server error"

#: Statuses a refused (or read-only) call of each function may answer.
_REFUSALS: dict[str, frozenset[str]] = {
    "get_service_info": frozenset({"not_available", "success"}),  # a quote reads only
    "create_reservation": frozenset({"not_available", "wrong_price", "bad_transaction"}),
    "pay_reservation": frozenset({"bad_transaction"}),
    "cancel_reservation": frozenset({"bad_transaction"}),
    "stop_service": frozenset({"bad_transaction"}),
    "get_user_account": frozenset({"success", "bad_transaction"}),
    "account_transfer": frozenset({"bad_transaction", "not_available", "success"}),
    "issue_ticket": frozenset({"not_available"}),
    "leave_parking": frozenset({"not_available"}),
    "check_plate_number": frozenset({"success", "not_available"}),
}

_NASTY = [
    "1333' OR '1'='1",
    "1333; DROP TABLE t_product; --",
    "\" OR \"\"=\"",
    "' UNION SELECT id, name FROM t_product --",
    "%s%s%s%n",
    "\\'; DELETE FROM t_account WHERE '1'='1",
    "\x00",
    "\u041a123\u041c\u0425 \U0001f697",
    "${jndi:ldap://127.0.0.1/x}",
    "<script>alert(1)</script>",
    "9" * 40,
    "-1",
    "1e400",
    "NaN",
    "-Infinity",
    "0x10",
    "1_000",
    "",
    " ",
    "x" * 4000,
]


@dataclass(frozen=True)
class FuzzCase:
    """One malformed call: the path and query sent, and what may come back."""

    function: str
    query: str
    expect: frozenset[str]

    def allows(self, exchange: Exchange) -> bool:
        if self.expect == frozenset({_INTERNAL}):
            return exchange.http_status == 500 and exchange.raw.strip() == "Internal server error"
        if exchange.http_status != 200 or exchange.status not in self.expect:
            return False
        if self.function == "account_transfer" and exchange.status == "success":
            # Only the refusal that writes nothing may say success here.
            return exchange.body.get("status_code") == "nothing_to_transfer"
        return True


def _query(params: dict[str, str]) -> str:
    return urlencode(params)


def fuzz_cases(seed: int = 20150128) -> list[FuzzCase]:
    """The batch: unknown functions, bad JSON, bad versions, bad values in every field of every function."""
    rng = random.Random(seed)
    cases: list[FuzzCase] = []
    for path in ("", "unknown", "GET_SERVICE_INFO", "get_service_info%20", "drop%20table%20t_order",
                 "get_user_account%00", "..%2f..%2fetc%2fpasswd", "pay_reservation.json"):  # fmt: skip
        cases.append(FuzzCase(path, "version=2", frozenset({_INTERNAL})))
    for function in ("get_service_info", "create_reservation"):
        for body in ("{", "not json", "{'parking_id': '1333'}", '{"parking_id": "1333",}', "[" * 2000):
            cases.append(FuzzCase(function, _query({"service_descr": body, "user_id": "1", "version": "2"}),
                                  frozenset({_INTERNAL})))  # fmt: skip
    for function in _REFUSALS:
        for version in ("3", "-1", "x", "", "1.0", "9" * 30, "2; DROP TABLE t_payment", "\u0662"):
            cases.append(FuzzCase(function, _query({"user_id": "1", "version": version}), frozenset({"bad_protocol"})))
        cases.append(FuzzCase(function, "", _REFUSALS[function]))  # nothing at all
        cases.append(FuzzCase(function, "version=2&%ff%fe=%c3%28&=&&&user_id", _REFUSALS[function]))
    shapes = ["[]", "1", "null", '"1333"', '{"parking_id": {"a": 1}}', '{"parking_id": ["1333"]}',
              '{"parking_id": "1333", "duration": {"x": 1}}', '{"parking_id": true, "duration": "120"}']  # fmt: skip
    for function in ("get_service_info", "create_reservation"):
        for shape in shapes:
            cases.append(FuzzCase(function, _query({"service_descr": shape, "user_id": "7", "price": "102",
                                                    "transaction_id": "123456", "version": "2"}),
                                  _REFUSALS[function]))  # fmt: skip
    for number, value in enumerate(_NASTY):
        # Protocol 2 for every value, protocol 1's vocabulary for every fifth one: the batch stays short.
        for version in ("2", "1") if number % 5 == 1 else ("2",):
            cases.extend(_value_cases(value, version, rng))
    return cases


def _value_cases(value: str, version: str, rng: random.Random) -> list[FuzzCase]:
    """``value`` in every string field of every function, refused or read-only by construction."""
    trans = f"{rng.randint(10**9, 2**31 - 1)}"
    cases = []

    def add(function: str, params: dict[str, str]) -> None:
        cases.append(FuzzCase(function, _query({**params, "version": version}), _REFUSALS[function]))

    for key in ("parking_id", "duration", "registration_plate", "user_ticket"):
        descr = {"parking_id": "1333", "duration": "120", "registration_plate": "A001AA77", key: value}
        add("get_service_info", {"service_descr": json.dumps(descr), "user_id": "7"})
        # create_reservation can only be refused: the price is never the quoted one.
        add("create_reservation", {"service_descr": json.dumps(descr), "user_id": "7", "price": "101.99",
                                   "transaction_id": trans})  # fmt: skip
    valid_descr = json.dumps({"parking_id": "1333", "duration": "120", "registration_plate": "A001AA77"})
    add("get_service_info", {"service_descr": valid_descr, "user_id": value})
    add("create_reservation", {"service_descr": valid_descr, "user_id": "7", "price": value, "transaction_id": trans})
    add("create_reservation", {"service_descr": valid_descr, "user_id": "7", "price": "1", "transaction_id": value})
    add("create_reservation", {"service_descr": valid_descr, "user_id": "7", "price": "102.00", "transaction_id": trans,
                               "pay_from_balance": value if value not in ("", " ", "-1") else "1e9"})  # fmt: skip
    for function in ("pay_reservation", "cancel_reservation", "stop_service"):
        add(function, {"transaction_id": value or "0"})
    add("get_user_account", {"user_id": value})
    add("account_transfer", {"transaction_id": value, "src_user_id": value, "dst_user_id": value + "x"})
    add("account_transfer", {"transaction_id": trans, "src_user_id": value, "dst_user_id": value})
    add("issue_ticket", {"parking_id": value if value.strip() else quote(value)})
    add("leave_parking", {"parking_id": value, "user_ticket": value})
    add("leave_parking", {"parking_id": "15001", "user_ticket": value})
    add("check_plate_number", {"registration_plate": value})
    return cases


def run_fuzz(base_url: str, cases: Sequence[FuzzCase] | None = None) -> list[str]:
    """Send the batch; one line per wrong answer (empty when every answer is allowed)."""
    client = ParkingClient(base_url)
    problems = []
    for case in cases if cases is not None else fuzz_cases():
        exchange = client.raw_call(case.function, case.query)
        if not case.allows(exchange):
            problems.append(f"expected {sorted(case.expect)}: {exchange.describe()}")
    alive = client.call("get_user_account", 2, {"user_id": "1"})
    if alive.status != "success":
        problems.append(f"the server no longer answers after the batch: {alive.describe()}")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m stratabench.systems.parking.fuzz URL``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m stratabench.systems.parking.fuzz http://127.0.0.1:PORT/", file=sys.stderr)
        return 2
    problems = run_fuzz(args[0])
    for line in problems:
        print(line)
    print(f"{len(fuzz_cases())} malformed calls, {len(problems)} wrong answers")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
