"""The study's test suite as a client (docs/studies/parking.md §11), and the conformance test of every server.

One suite run is the five test cases of docs/studies/parking.md §11.2 in alphabetical order,
with the benchmark's checks (``-apu``: protocol 2, free-place checks, plate
checks, status codes checked): 68 HTTP calls, one new connection each.
The run stops at the first wrong answer with a :class:`DriverFailure`
naming the test, the step, the call sent, what was expected and what came
back. Run it against any server::

    python -m stratabench.systems.parking.driver http://127.0.0.1:PORT/ [--runs 20]

Beyond the original client, test_version requires all three protocol
versions to answer ``success`` (the Python server's behaviour is normative,
docs/studies/parking.md §12); ``--lenient-versions`` accepts the target version alone,
as the original did. Prices are sent as the exact decimals the server
quoted (``102.00``), which docs/studies/parking.md §5.3 makes equal to the original client's
``102``.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlencode, urlsplit

from stratabench.errors import StratabenchError, UsageError

__all__ = [
    "DriverFailure", "DriverOptions", "Exchange", "ParkingClient", "RunResult", "SuiteDriver", "main", "service_descr",
]

_PLATE_LETTERS = "ABEKMHOPCTYX"
_PLATE_REGIONS = [*range(1, 200), 777]
TEST_CASES = ("test_account_transfer", "test_parking_account", "test_postpay", "test_prepay", "test_version")


class DriverFailure(StratabenchError):
    """A server gave a wrong answer: the test, step, call, expected and actual answer, on one line."""


@dataclass(frozen=True)
class DriverOptions:
    """The suite's options (docs/studies/parking.md §11.1); the defaults are the benchmark's ``-apu`` with protocol 2."""

    target_version: int = 2
    check_avail: bool = True
    check_plate: bool = True
    check_status_code: bool = True
    strict_versions: bool = True
    timeout_s: float = 15.0


def _shorten(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


@dataclass
class Exchange:
    """One call: what was sent and what came back (``status`` is ``error`` for a non-JSON or non-200 answer)."""

    function: str
    query: str
    http_status: int = 0
    raw: str = ""
    body: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        return str(self.body.get("status", "error"))

    def describe(self) -> str:
        return f"GET /{_shorten(self.function)}?{_shorten(self.query)} -> HTTP {self.http_status} {_shorten(self.raw)}"

    def decimal_at(self, *path: str) -> Decimal | None:
        """The answer's value at ``path`` (nested keys) as a decimal; ``None`` when absent or not a number."""
        value: Any = self.body
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        try:
            return Decimal(str(value))
        except InvalidOperation:
            return None


class ParkingClient:
    """Calls one server, one new TCP connection per call, as the study's client did."""

    def __init__(self, base_url: str, *, timeout_s: float = 15.0) -> None:
        parts = urlsplit(base_url if "://" in base_url else f"http://{base_url}")
        if parts.scheme != "http" or not parts.hostname or not parts.port:
            raise UsageError(f"parking server URL {base_url!r}: give http://HOST:PORT/ (a prefix path is allowed)")
        self.host = parts.hostname
        self.port = parts.port
        self.prefix = parts.path.rstrip("/") + "/"
        self.timeout_s = timeout_s
        self.calls: Counter[str] = Counter()
        #: Client-side seconds spent in each function's calls (connection to last byte).
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.last: Exchange | None = None

    def call(self, function: str, version: int, params: dict[str, Any]) -> Exchange:
        """Send one call; ``version`` is appended last for protocols 1 and 2, omitted for 0."""
        pairs = [(key, value) for key, value in params.items() if value is not None]
        if version:
            pairs.append(("version", str(version)))
        return self.raw_call(function, urlencode(pairs))

    def raw_call(self, function: str, query: str) -> Exchange:
        """Send ``GET <prefix><function>?<query>`` as given (the fuzz batch sends malformed ones)."""
        exchange = Exchange(function, query)
        self.calls[function] += 1
        self.last = exchange
        started = time.perf_counter()
        connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
        try:
            connection.request("GET", f"{self.prefix}{function}?{exchange.query}", headers={"Accept": "*/*"})
            response = connection.getresponse()
            exchange.http_status = response.status
            exchange.raw = response.read().decode("utf-8", "replace")
        except (OSError, http.client.HTTPException) as error:
            exchange.raw = f"no answer: {error}"
            return exchange
        finally:
            connection.close()
            self.seconds[function] += time.perf_counter() - started
        if exchange.http_status == 200:
            try:
                body = json.loads(exchange.raw)
            except ValueError:
                return exchange
            if isinstance(body, dict) and "status" in body and "ts" in body:
                exchange.body = body
        return exchange


@dataclass
class RunResult:
    """One suite run: its wall time, calls per function and per test, and the failure if any."""

    wall_s: float
    calls: Counter[str]
    calls_per_test: dict[str, int]
    failure: str | None = None
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.failure is None


def service_descr(version: int, *, parking_id: str | None = None, plate: str | None = None,
           duration: int | None = None, ticket: str | None = None) -> str:  # fmt: skip
    """``service_descr`` in one version's vocabulary; every value a JSON string, as the study's client wrote."""
    descr: dict[str, str] = {}
    if parking_id is not None:
        descr["parking_object_id" if version == 0 else "parking_id"] = parking_id
    if plate is not None:
        descr["plate_number" if version == 0 else "registration_plate"] = plate
    if duration is not None:
        if version == 0:
            descr["hours"] = str((duration + 59) // 60)
        else:
            descr["duration"] = str(duration)
    if ticket is not None:
        descr["user_ticket"] = ticket
    return json.dumps(descr)


class SuiteDriver:
    """Runs the five test cases against one server (docs/studies/parking.md §11.2)."""

    def __init__(self, base_url: str, options: DriverOptions | None = None, *, seed: int | None = None) -> None:
        self.options = options or DriverOptions()
        self.client = ParkingClient(base_url, timeout_s=self.options.timeout_s)
        # Seeded from the clock in milliseconds, as the study's client was.
        self.random = random.Random(seed if seed is not None else int(time.time() * 1000))
        self._test = ""
        self._step = ""

    # -- helpers -----------------------------------------------------------

    def random_id(self) -> str:
        return str(self.random.randint(0, 2**31 - 1))

    def random_plate(self) -> str:
        pick = self.random.choice
        return f"{pick(_PLATE_LETTERS)}{self.random.randint(1, 999):03d}{pick(_PLATE_LETTERS)}" \
               f"{pick(_PLATE_LETTERS)}{pick(_PLATE_REGIONS):02d}"  # fmt: skip

    def fail(self, expected: str, exchange: Exchange | None = None) -> DriverFailure:
        exchange = exchange or self.client.last
        sent = exchange.describe() if exchange else "no call"
        return DriverFailure(f"{self._test} step '{self._step}': expected {expected}; {sent}")

    def step(self, name: str) -> None:
        self._step = name

    def call(self, function: str, *, version: int | None = None, **params: Any) -> Exchange:
        return self.client.call(function, self.options.target_version if version is None else version, params)

    def expect(self, exchange: Exchange, status: str, code: str | None = None) -> Exchange:
        if exchange.status != status:
            raise self.fail(f"status {status!r}", exchange)
        if code is not None and self.options.check_status_code and exchange.body.get("status_code") != code:
            raise self.fail(f"status {status!r} with status_code {code!r}", exchange)
        return exchange

    def equal(self, expected: Any, actual: Any, what: str) -> None:
        if expected != actual:
            raise self.fail(f"{what} = {expected} (got {actual})")

    def decimal(self, exchange: Exchange, *path: str) -> Decimal:
        value = exchange.decimal_at(*path)
        if value is None:
            raise self.fail(f"{'.'.join(path)} as a decimal", exchange)
        return value

    def quote(self, descr: str, user_id: str | None, *, ticket: bool = False) -> tuple[int, Decimal, Decimal | None]:
        """get_service_info that must succeed: (free places, price, balance or None)."""
        exchange = self.expect(self.call("get_service_info", service_descr=descr, user_id=user_id), "success")
        info = exchange.body.get("info")
        if not isinstance(info, dict):
            raise self.fail("an info object", exchange)
        if self.options.target_version > 0:
            wanted = ("start_ts", "duration", "paid_duration") if ticket else ("start_ts", "duration")
            missing = [key for key in wanted if key not in info]
            if missing:
                raise self.fail(f"info with {', '.join(missing)}", exchange)
        try:
            places = int(info["available_places"])
        except (KeyError, TypeError, ValueError):
            raise self.fail("info.available_places as an integer", exchange) from None
        balance = self.decimal(exchange, "info", "balance") if "balance" in info else None
        return places, self.decimal(exchange, "price"), balance

    def places(self, descr: str, user_id: str | None, *, ticket: bool = False) -> int:
        return self.quote(descr, user_id, ticket=ticket)[0]

    def confirm(self, function: str, transaction_id: str) -> None:
        """pay_reservation or cancel_reservation until ``success`` (``in_progress`` retried for 15 s)."""
        started = time.monotonic()
        while True:
            exchange = self.call(function, transaction_id=transaction_id)
            if exchange.status == "success":
                return
            if self.options.target_version == 0 or exchange.status != "in_progress":
                raise self.fail("status 'success'", exchange)
            if time.monotonic() - started > self.options.timeout_s:
                raise self.fail("'success' within 15 s of 'in_progress'", exchange)
            time.sleep(0.5)

    def reserve(self, descr: str, transaction_id: str, price: Decimal, user_id: str | None,
                from_balance: Decimal = Decimal(0)) -> Exchange:  # fmt: skip
        """create_reservation as the client sends it: pay_from_balance always in v2, else only when set."""
        sent_from_balance: str | None = f"{from_balance:.2f}"
        if self.options.target_version < 2 and not from_balance:
            sent_from_balance = None
        return self.call("create_reservation", service_descr=descr, transaction_id=transaction_id,
                         price=str(price), user_id=user_id, pay_from_balance=sent_from_balance)  # fmt: skip

    # -- the five test cases -----------------------------------------------

    def test_account_transfer(self) -> None:
        v = self.options.target_version
        user = self.random_id()
        self.step("quote 2 h")
        descr = service_descr(v, parking_id="1333", duration=120, plate=self.random_plate())
        _places, price, _balance = self.quote(descr, user)
        self.step("reserve and pay")
        first = self.random_id()
        self.expect(self.reserve(descr, first, price, user), "success")
        self.confirm("pay_reservation", first)
        self.step("stop_service refunds into the wallet")
        refund = self.decimal(self.expect(self.call("stop_service", transaction_id=first), "success"), "delta_amount")
        self.step("another user's empty wallet")
        other = self.random_id()
        exchange = self.expect(self.call("get_user_account", user_id=other), "success")
        self.equal(Decimal(0), self.decimal(exchange, "balance"), "balance")
        transfer = hashlib.md5(f"{user};{other};{int(time.time())}".encode()).hexdigest()

        def move(source: str, destination: str) -> Exchange:
            return self.call("account_transfer", transaction_id=transfer, src_user_id=source, dst_user_id=destination)

        self.step("transfer from an empty wallet")
        self.expect(move(other, user), "success", "nothing_to_transfer")
        self.step("transfer to the same wallet")
        self.expect(move(user, user), "bad_transaction", "same_src_and_dst")
        self.step("reserve from the wallet")
        _places, price, _balance = self.quote(descr, user)
        second = self.random_id()
        self.expect(self.reserve(descr, second, price, user, min(price, refund)), "success")
        self.step("transfer while funds are reserved")
        self.expect(move(user, other), "not_available", "reserved_funds_present")
        self.step("cancel the reservation")
        self.confirm("cancel_reservation", second)
        self.step("transfer")
        started = time.monotonic()
        while True:
            exchange = move(user, other)
            if exchange.status == "success":
                break
            if exchange.status != "in_progress" or time.monotonic() - started > 10:
                raise self.fail("status 'success' (or 'in_progress' for at most 10 s)", exchange)
            time.sleep(0.05)
        self.step("the same transfer again")
        self.expect(move(user, other), "success", "already_done")
        self.step("the same transfer id to a third user")
        self.expect(move(user, self.random_id()), "bad_transaction", "another_trans_exists")
        self.step("the receiver's wallet")
        exchange = self.expect(self.call("get_user_account", user_id=other), "success")
        self.equal(refund, self.decimal(exchange, "balance"), "balance")
        self.step("the sender's wallet")
        exchange = self.expect(self.call("get_user_account", user_id=user), "success")
        self.equal(Decimal(0), self.decimal(exchange, "balance"), "balance")

    def test_parking_account(self) -> None:
        v = self.options.target_version
        user = self.random_id()
        wallet = Decimal(0)
        self.step("empty wallet")
        exchange = self.expect(self.call("get_user_account", user_id=user), "success")
        self.equal(wallet, self.decimal(exchange, "balance"), "balance")
        descr = ""
        price = Decimal(0)
        balance: Decimal | None = None
        for round_number in (1, 2):
            self.step(f"round {round_number}: quote 2 h")
            descr = service_descr(v, parking_id="1333", duration=120, plate=self.random_plate())
            _places, price, balance = self.quote(descr, user)
            self.equal(wallet, balance, "balance")
            self.step(f"round {round_number}: reserve and pay")
            transaction_id = self.random_id()
            self.expect(self.reserve(descr, transaction_id, price, user), "success")
            self.confirm("pay_reservation", transaction_id)
            self.step(f"round {round_number}: stop_service")
            exchange = self.expect(self.call("stop_service", transaction_id=transaction_id), "success")
            refund = self.decimal(exchange, "delta_amount")
            wallet += refund
            self.step(f"round {round_number}: stop_service again")
            exchange = self.expect(self.call("stop_service", transaction_id=transaction_id), "success")
            self.equal(refund, self.decimal(exchange, "delta_amount"), "delta_amount")
            self.step(f"round {round_number}: quote 1 h shows the refund")
            descr = service_descr(v, parking_id="1333", duration=60, plate=self.random_plate())
            _places, price, balance = self.quote(descr, user)
            self.equal((Decimal("1.75") * price).quantize(Decimal(".01")), refund, "refund of 1.75 h")
            self.equal(wallet, balance, "balance")
            self.step(f"round {round_number}: wallet")
            exchange = self.expect(self.call("get_user_account", user_id=user), "success")
            self.equal(wallet, self.decimal(exchange, "balance"), "balance")
        self.step("reserve 1 h paid from the wallet, and pay")
        transaction_id = self.random_id()
        self.expect(self.reserve(descr, transaction_id, price, user, price), "success")
        self.confirm("pay_reservation", transaction_id)
        paid_from_wallet = price
        self.step("the wallet went down by the price")
        descr = service_descr(v, parking_id="1333", duration=60, plate=self.random_plate())
        _places, price, new_balance = self.quote(descr, user)
        if balance is None or new_balance is None:
            raise self.fail("info.balance (protocol 2)")
        self.equal(paid_from_wallet, balance - new_balance, "balance decrease")
        self.step("stop_service of the wallet-paid session")
        exchange = self.expect(self.call("stop_service", transaction_id=transaction_id), "success")
        refund = self.decimal(exchange, "delta_amount")
        if not refund > 0:
            raise self.fail("delta_amount > 0", exchange)
        exchange = self.expect(self.call("get_user_account", user_id=user), "success")
        self.equal(new_balance + refund, self.decimal(exchange, "balance"), "balance")

    def test_postpay(self) -> None:
        v = self.options.target_version
        lot = "15001"
        plate = self.random_plate()
        user = self.random_id() if v > 0 else None
        self.step("issue_ticket")
        exchange = self.expect(self.call("issue_ticket", parking_id=lot), "success")
        ticket = str(exchange.body.get("user_ticket"))
        try:
            places_before = int(exchange.body["available_places"]) + 1
        except (KeyError, TypeError, ValueError):
            raise self.fail("available_places as an integer", exchange) from None
        if v > 0:
            self.step("quote an unknown ticket")
            bad = service_descr(v, parking_id=lot, ticket="xxx0", plate=plate)
            self.expect(self.call("get_service_info", service_descr=bad, user_id=user), "not_available",
                        "user_ticket_not_found")  # fmt: skip
        if v == 1:
            self.step("quote a ticket without a plate (v1)")
            bare = service_descr(v, parking_id=lot, ticket=ticket)
            self.expect(self.call("get_service_info", service_descr=bare, user_id=user), "not_available",
                        "invalid_registration_plate")  # fmt: skip
        self.step("quote the ticket")
        descr = service_descr(v, parking_id=lot, ticket=ticket, plate=plate)
        _places, price, _balance = self.quote(descr, user, ticket=True)
        self.step("reserve")
        transaction_id = self.random_id()
        self.expect(self.reserve(descr, transaction_id, price, user), "success")
        if self.options.check_avail:
            self.step("the ticket holds a place")
            self.equal(places_before, self.places(descr, user, ticket=True) + 1, "free places + 1")
        self.step("pay")
        self.confirm("pay_reservation", transaction_id)
        self.step("pay again")
        self.confirm("pay_reservation", transaction_id)
        if self.options.check_avail:
            self.step("quote the paid ticket")
            self.expect(self.call("get_service_info", service_descr=descr, user_id=user), "success")
            self.step("leave_parking")
            self.expect(self.call("leave_parking", parking_id=lot, user_ticket=ticket), "success")
            self.step("quote the ticket after leaving")
            self.expect(self.call("get_service_info", service_descr=descr, user_id=user), "not_available",
                        "user_ticket_out_of_parking" if v > 0 else None)  # fmt: skip
            self.step("the place is free again")
            by_plate = service_descr(v, parking_id=lot, duration=60, plate=plate)
            self.equal(places_before, self.places(by_plate, user), "free places")
        self.step("cancel")
        self.confirm("cancel_reservation", transaction_id)

    def test_prepay(self) -> None:
        v = self.options.target_version
        plate = self.random_plate()
        transaction_id = self.random_id()
        user = self.random_id() if v > 0 else None
        if v > 0:
            self.step("quote without user_id")
            descr = service_descr(v, parking_id="1333", duration=120, plate=plate)
            self.expect(self.call("get_service_info", service_descr=descr, user_id=None), "not_available",
                        "invalid_user_id")  # fmt: skip
        self.step("quote an unknown lot")
        descr = service_descr(v, parking_id="1333-", duration=120, plate=plate)
        self.expect(self.call("get_service_info", service_descr=descr, user_id=user), "not_available",
                    "invalid_parking_id" if v > 0 else None)  # fmt: skip
        self.step("quote without duration")
        descr = service_descr(v, parking_id="1333", plate=plate)
        self.expect(self.call("get_service_info", service_descr=descr, user_id=user), "not_available",
                    "invalid_duration" if v > 0 else None)  # fmt: skip
        if v == 1:
            self.step("quote without a plate (v1)")
            descr = service_descr(v, parking_id="1333", duration=120)
            self.expect(self.call("get_service_info", service_descr=descr, user_id=user), "not_available",
                        "invalid_registration_plate")  # fmt: skip
        self.step("quote 2 h")
        descr = service_descr(v, parking_id="1333", duration=120, plate=plate)
        places, price, _balance = self.quote(descr, user)
        self.step("reserve without a plate")
        bare = service_descr(v, parking_id="1333", duration=120)
        self.expect(self.reserve(bare, transaction_id, price, user), "not_available",
                    "invalid_registration_plate" if v > 0 else None)  # fmt: skip
        self.step("reserve at a wrong price")
        self.expect(self.reserve(descr, transaction_id, price + 1, user), "wrong_price")
        self.step("reserve")
        self.expect(self.reserve(descr, transaction_id, price, user), "success")
        self.step("reserve again (idempotent)")
        self.expect(self.reserve(descr, transaction_id, price, user), "success")
        self.check_plate(plate, "false", "plate before payment")
        self.step("pay")
        self.confirm("pay_reservation", transaction_id)
        if self.options.check_avail:
            self.step("the car takes a place")
            self.equal(places - 1, self.places(descr, user), "free places")
        self.check_plate(plate, "true", "plate after payment")
        self.step("cancel")
        self.confirm("cancel_reservation", transaction_id)
        self.check_plate(plate, "false", "plate after cancel")
        if self.options.check_avail:
            self.step("the place is free again")
            self.equal(places, self.places(descr, user), "free places")
        self.step("pay again (idempotent)")
        self.confirm("pay_reservation", transaction_id)
        self.step("cancel again (idempotent)")
        self.confirm("cancel_reservation", transaction_id)

    def check_plate(self, plate: str, paid: str, step: str) -> None:
        if not self.options.check_plate:
            return
        self.step(step)
        exchange = self.expect(self.call("check_plate_number", registration_plate=plate), "success")
        if exchange.body.get("paid") != paid:
            raise self.fail(f"paid = {paid!r}", exchange)

    def test_version(self) -> None:
        plate = self.random_plate()
        user = self.random_id()
        answered = []
        for version in range(3):
            self.step(f"quote in protocol {version}")
            descr = service_descr(version, parking_id="1333", duration=120, plate=plate)
            exchange = self.call("get_service_info", version=version, service_descr=descr, user_id=user)
            if exchange.status == "success":
                answered.append(version)
            elif self.options.strict_versions:
                raise self.fail(f"protocol {version} answered 'success'", exchange)
        if self.options.target_version not in answered:
            raise self.fail(f"the target protocol {self.options.target_version} answered 'success'")

    # -- one run -------------------------------------------------------------

    def run(self) -> RunResult:
        """One suite run; a wrong answer ends it and is recorded, never retried."""
        before = Counter(self.client.calls)
        seconds_before = dict(self.client.seconds)
        per_test: dict[str, int] = {}
        failure: str | None = None
        started = time.perf_counter()
        for name in TEST_CASES:
            self._test = name
            count_before = sum(self.client.calls.values())
            test: Callable[[], None] = getattr(self, name)
            try:
                test()
            except DriverFailure as wrong:
                failure = wrong.message
            per_test[name] = sum(self.client.calls.values()) - count_before
            if failure:
                break
        wall_s = time.perf_counter() - started
        seconds = {name: self.client.seconds[name] - seconds_before.get(name, 0.0) for name in self.client.seconds}
        return RunResult(wall_s, self.client.calls - before, per_test, failure, seconds)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m stratabench.systems.parking.driver URL``: run the suite, stop at the first failure."""
    parser = argparse.ArgumentParser(prog="python -m stratabench.systems.parking.driver",
                                     description="Run the parking study's test suite against a server.")  # fmt: skip
    parser.add_argument("url", help="the server's base URL, e.g. http://127.0.0.1:8111/")
    parser.add_argument("--runs", type=int, default=1, help="suite runs back to back (default 1)")
    parser.add_argument("-t", "--target-version", type=int, choices=(0, 1, 2), default=2)
    parser.add_argument("--no-check-avail", action="store_true", help="drop the -a checks")
    parser.add_argument("--no-check-plate", action="store_true", help="drop the -p checks")
    parser.add_argument("-e", "--no-check-status-code", action="store_true", help="do not check status_code")
    parser.add_argument("--lenient-versions", action="store_true",
                        help="test_version needs only the target version to answer success")  # fmt: skip
    parser.add_argument("--seed", type=int, help="seed of the random ids (default: the clock)")
    args = parser.parse_args(argv)
    options = DriverOptions(target_version=args.target_version, check_avail=not args.no_check_avail,
                            check_plate=not args.no_check_plate, check_status_code=not args.no_check_status_code,
                            strict_versions=not args.lenient_versions)  # fmt: skip
    try:
        driver = SuiteDriver(args.url, options, seed=args.seed)
        calls: Counter[str] = Counter()
        for number in range(1, args.runs + 1):
            result = driver.run()
            calls += result.calls
            if not result.ok:
                print(f"run {number}: FAILED {result.failure}", file=sys.stderr)
                return 1
            print(f"run {number}: ok, {sum(result.calls.values())} calls, {result.wall_s:.3f} s")
    except StratabenchError as error:
        print(f"error: {error.message}", file=sys.stderr)
        return error.exit_code
    print("calls per function: " + ", ".join(f"{name} {count}" for name, count in calls.most_common()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
