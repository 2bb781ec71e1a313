"""The parking service under load: many drivers at once, each on its own lots and users (docs/studies/parking.md §12).

``stratabench load parking --server go-sql --db postgresql --clients 8``
runs the load engine (:mod:`stratabench.load`) with drivers of the parking
API as its clients. In order:

1. The database is recreated and seeded (:mod:`stratabench.systems.parking.schema`), and every driver
   gets two lots of its own, one prepaid and one postpaid, and two users:
   nothing is shared, so every answer a driver gets is exactly predictable
   (docs/studies/parking.md §12: parallel clients need their own lots).
2. The server starts (:class:`~.process.ServerProcess`, any of the four).
3. Each driver runs the suite's scenarios over and over, one HTTP call per
   request of the engine, in the suite's mix (docs/studies/parking.md §11.2, Table 1):
   prepaid parking with plate checks and a cancel, a refund by stop_service
   into the wallet, a session paid from the wallet, a transfer between the
   driver's two users (refused while funds are reserved), and a ticket
   issued, paid and left with. Every answer is checked: status and status
   code, price, free places, balance, refund. A wrong answer is a failed
   check (the first one in words); a server that does not answer is an
   error, and five in a row stop the driver.
4. After the clients, the database is reconciled with
   :func:`~.invariants.violations`: every wallet's balance is its receipts
   less its consumes and transfers, its reserved part its open consumes,
   every order's paid amount its payments less its refunds, and each of the
   drivers' lots has exactly as many places taken as orders holding one.
   The first discrepancy fails the configuration in one line.

Prices are those of the seed lots (51 per hour prepaid, 60 postpaid), so a
2 h quote is 102.00, a 1 h quote 51.00, a refund right after paying 89.25
and 38.25, a fresh ticket 15.00 (docs/studies/parking.md §7.5, 11.2).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from stratabench.errors import ServiceError
from stratabench.load.client import ClientReport, RequestPlan
from stratabench.load.integrity import CheckFailures
from stratabench.load.run import ClientRunner, LoadResult, Pacing, merge_reports, run_clients
from stratabench.redact import redact
from stratabench.systems.parking.driver import Exchange, ParkingClient, service_descr

__all__ = [
    "ParkingLoadSpec",
    "ParkingRequestPlan",
    "ParkingRequests",
    "prepare_database",
    "reconcile",
    "reconciliation_failure",
    "run_parking_load",
]

VERSION = 2
PLACES = 1_000_000
"""Free places of each driver's lots: stop_service leaks one per refund (docs/studies/parking.md §9), so room for hours of load."""
_RATES = {"p": Decimal(51), "t": Decimal(60)}
_TWO_HOURS, _ONE_HOUR, _FIRST_QUARTER = Decimal("102.00"), Decimal("51.00"), Decimal("15.00")
_REFUND_2H, _REFUND_1H = Decimal("89.25"), Decimal("38.25")

Call = tuple[str, dict[str, Any]]
Scenario = Generator[Call, Exchange, None]


def lot_names(index: int) -> tuple[str, str]:
    """Driver ``index``'s prepaid and postpaid lots."""
    return f"L{index}p", f"L{index}t"


@dataclass(frozen=True)
class ParkingLoadSpec(Pacing):
    """One configuration: a server on a database under ``clients`` drivers.

    Attributes
    ----------
    impl
        ``python-orm``, ``python-core``, ``go-orm`` or ``go-sql``.
    db_url
        The database (``sqlite:///PATH``, ``postgresql://...``, ``mysql://...``);
        on a server, the study's own database in it is used (:func:`~.schema.own_database`).
    base_url
        The running server's URL, set by :func:`run_parking_load` once it listens.
    seed
        Seeds the drivers' ids and plates.
    """

    impl: str
    db_url: str
    base_url: str = ""
    seed: int = 1

    @property
    def database(self) -> str:
        from stratabench.systems.parking.schema import dialect_of

        return dialect_of(self.db_url)

    @property
    def cell_name(self) -> str:
        """``python-core/postgresql/c8/closed``."""
        return f"{self.impl}/{self.database}/{super().cell_name}"

    def cell_params(self) -> dict[str, Any]:
        return {"server": self.impl, "database": self.database, "db": redact(self.db_url), **super().cell_params()}

    @property
    def subject(self) -> tuple[str, str]:
        return "server", f"{self.impl} on {self.database}"

    @property
    def title(self) -> str:
        return "parking under load: each driver on its own lots and users, every answer checked"

    @property
    def initial_places(self) -> dict[str, int]:
        """Every driver's lot and its free places before the run."""
        return {name: PLACES for index in range(self.clients) for name in lot_names(index)}

    def plans(self) -> list[RequestPlan]:
        return [ParkingRequestPlan(self.base_url, index, self.seed) for index in range(self.clients)]


@dataclass(frozen=True)
class ParkingRequestPlan:
    """Driver ``index``: its server, its lots and users (derived from the index), its seed."""

    base_url: str
    index: int
    seed: int = 1

    @property
    def preload(self) -> tuple[str, ...]:
        return ("stratabench.suites.parking.load",)

    def open(self, index: int) -> ParkingRequests:
        return ParkingRequests(self.base_url, self.index, self.seed)


class _Wrong(Exception):
    """An answer that is not what the study requires (docs/studies/parking.md §7); ends the scenario."""


@dataclass
class _Ledger:
    """What the driver's lots and wallets must hold; ``None`` when unknown (after an error), then adopted."""

    places: dict[str, int | None]
    balances: dict[str, Decimal | None]


class ParkingRequests:
    """One driver: the scenarios of the suite, one call per request, every answer checked (module docstring)."""

    def __init__(self, base_url: str, index: int, seed: int) -> None:
        self.client = ParkingClient(base_url)
        self.index = index
        self.prepaid, self.postpaid = lot_names(index)
        # Numeric ids, as the study's client sends; disjoint between drivers by their prefix.
        self.users = [f"{index + 1}{n:03d}{seed % 1000:03d}" for n in (1, 2)]
        self.ledger = _Ledger({self.prepaid: PLACES, self.postpaid: PLACES}, dict.fromkeys(self.users, Decimal(0)))
        self.random = random.Random(seed * 1_000_003 + index)
        self._serial = 0
        self._failures = CheckFailures()
        self._scenarios = [self._prepay, self._refund, self._from_wallet, self._transfer, self._postpay]
        # Drivers start at different scenarios, so that at any moment the server sees the whole mix.
        self._round = index
        self._scenario: Scenario | None = None
        self._pending: Call | None = None
        self._step = ""

    @property
    def check_failures(self) -> CheckFailures:
        return self._failures

    def prepare(self) -> None:
        """Check the server answers and sees the driver's lot (untimed)."""
        exchange = self.client.call("get_user_account", VERSION, {"user_id": self.users[0]})
        if exchange.http_status != 200:
            raise ServiceError(f"parking server {self.client.host}:{self.client.port}: {exchange.describe()}")

    def close(self) -> None:
        self._scenario = None

    # -- the engine's request step -------------------------------------------

    def send(self) -> str:
        call = self._next_call()
        function, params = call
        exchange = self.client.call(function, VERSION, params)
        if exchange.http_status == 0:
            self._abandon()
            raise ServiceError(f"parking server {self.client.host}:{self.client.port}: {exchange.raw}")
        assert self._scenario is not None
        try:
            self._pending = self._scenario.send(exchange)
        except StopIteration:
            self._scenario, self._pending = None, None
        except _Wrong as wrong:
            self._failures.note(f"driver {self.index}, {self._step}: expected {wrong}; {exchange.describe()}")
            self._abandon()
        return function

    def _next_call(self) -> Call:
        while self._pending is None:
            scenario = self._scenarios[self._round % len(self._scenarios)]
            self._round += 1
            self._scenario = scenario()
            try:
                self._pending = next(self._scenario)
            except StopIteration:  # nothing to do now (an empty wallet to pay from)
                self._scenario = None
        return self._pending

    def _abandon(self) -> None:
        """After an error or a wrong answer the driver no longer knows its state: adopt what it sees next."""
        self._scenario, self._pending = None, None
        self.ledger.places = dict.fromkeys(self.ledger.places)
        self.ledger.balances = dict.fromkeys(self.ledger.balances)

    # -- checks -----------------------------------------------------------------

    def _serial_id(self) -> str:
        self._serial += 1
        return f"{self.index + 1}{self._serial:09d}{self.random.randint(0, 999):03d}"

    def _plate(self) -> str:
        self._serial += 1
        return f"K{self.index}X{self._serial}"

    @staticmethod
    def _expect(exchange: Exchange, status: str, code: str | None = None) -> None:
        if exchange.status != status or (code is not None and exchange.body.get("status_code") != code):
            raise _Wrong(f"status {status!r}" + (f" with status_code {code!r}" if code else ""))

    @staticmethod
    def _decimal(exchange: Exchange, *path: str) -> Decimal:
        value = exchange.decimal_at(*path)
        if value is None:
            raise _Wrong(f"{'.'.join(path)} as a decimal")
        return value

    @staticmethod
    def _equal(what: str, expected: object, actual: object) -> None:
        if expected != actual:
            raise _Wrong(f"{what} {expected} (got {actual})")

    def _places(self, lot: str, seen: int) -> None:
        known = self.ledger.places[lot]
        if known is not None:
            self._equal(f"free places of lot {lot}", known, seen)
        self.ledger.places[lot] = seen

    def _balance(self, user: str, seen: Decimal) -> None:
        known = self.ledger.balances[user]
        if known is not None:
            self._equal(f"balance of user {user}", known, seen)
        self.ledger.balances[user] = seen

    def _take(self, lot: str, change: int) -> None:
        known = self.ledger.places[lot]
        self.ledger.places[lot] = None if known is None else known - change

    def _credit(self, user: str, amount: Decimal) -> None:
        known = self.ledger.balances[user]
        self.ledger.balances[user] = None if known is None else known + amount

    # -- calls that must succeed --------------------------------------------------

    def _quote(self, descr: str, user: str, lot: str, price: Decimal) -> Scenario:
        self._step = "get_service_info"
        exchange = yield "get_service_info", {"service_descr": descr, "user_id": user}
        self._expect(exchange, "success")
        self._equal("price", price, self._decimal(exchange, "price"))
        info = exchange.body.get("info")
        if not isinstance(info, dict) or not isinstance(info.get("available_places"), int):
            raise _Wrong("info.available_places as an integer")
        self._places(lot, info["available_places"])
        self._balance(user, self._decimal(exchange, "info", "balance"))

    def _reserve(self, descr: str, transaction: str, price: Decimal, user: str,
                 from_balance: Decimal = Decimal(0)) -> Scenario:  # fmt: skip
        self._step = "create_reservation"
        exchange = yield "create_reservation", {"service_descr": descr, "transaction_id": transaction,
                                                "price": f"{price:.2f}", "user_id": user,
                                                "pay_from_balance": f"{from_balance:.2f}"}  # fmt: skip
        self._expect(exchange, "success")
        self._equal("price", price, self._decimal(exchange, "price"))

    def _confirm(self, function: str, transaction: str) -> Scenario:
        self._step = function
        self._expect((yield function, {"transaction_id": transaction}), "success")

    def _account(self, user: str) -> Scenario:
        self._step = "get_user_account"
        exchange = yield "get_user_account", {"user_id": user}
        self._expect(exchange, "success")
        self._balance(user, self._decimal(exchange, "balance"))

    def _plate_paid(self, plate: str, paid: str) -> Scenario:
        self._step = "check_plate_number"
        exchange = yield "check_plate_number", {"registration_plate": plate}
        self._expect(exchange, "success")
        self._equal(f"paid of plate {plate}", paid, exchange.body.get("paid"))

    def _stop(self, transaction: str, user: str, refund: Decimal, *, first: bool) -> Scenario:
        self._step = "stop_service"
        exchange = yield "stop_service", {"transaction_id": transaction}
        self._expect(exchange, "success")
        self._equal("delta_amount", refund, self._decimal(exchange, "delta_amount"))
        if first:
            self._credit(user, refund)

    # -- the scenarios ------------------------------------------------------------

    def _prepay(self) -> Scenario:
        """test_prepay's flow: quote, reserve, plate unpaid, pay (a place taken), plate paid, cancel (freed)."""
        user, plate, transaction = self.users[0], self._plate(), self._serial_id()
        descr = service_descr(VERSION, parking_id=self.prepaid, duration=120, plate=plate)
        yield from self._quote(descr, user, self.prepaid, _TWO_HOURS)
        yield from self._reserve(descr, transaction, _TWO_HOURS, user)
        yield from self._plate_paid(plate, "false")
        yield from self._confirm("pay_reservation", transaction)
        self._take(self.prepaid, 1)
        yield from self._quote(descr, user, self.prepaid, _TWO_HOURS)
        yield from self._plate_paid(plate, "true")
        yield from self._confirm("cancel_reservation", transaction)
        self._take(self.prepaid, -1)
        yield from self._plate_paid(plate, "false")

    def _refund(self) -> Scenario:
        """test_parking_account's refund: pay 2 h, stop at once (89.25 into the wallet, twice the same), read it."""
        user, transaction = self.users[0], self._serial_id()
        descr = service_descr(VERSION, parking_id=self.prepaid, duration=120, plate=self._plate())
        yield from self._quote(descr, user, self.prepaid, _TWO_HOURS)
        yield from self._reserve(descr, transaction, _TWO_HOURS, user)
        yield from self._confirm("pay_reservation", transaction)
        self._take(self.prepaid, 1)  # and stop_service never gives it back (docs/studies/parking.md §9)
        yield from self._stop(transaction, user, _REFUND_2H, first=True)
        yield from self._stop(transaction, user, _REFUND_2H, first=False)
        yield from self._account(user)

    def _from_wallet(self) -> Scenario:
        """Pay 1 h from the wallet, see the balance drop by 51.00, stop it (38.25 back)."""
        user = self.users[0]
        balance = self.ledger.balances[user]
        if balance is None or balance < _ONE_HOUR:
            return
        transaction = self._serial_id()
        descr = service_descr(VERSION, parking_id=self.prepaid, duration=60, plate=self._plate())
        yield from self._quote(descr, user, self.prepaid, _ONE_HOUR)
        yield from self._reserve(descr, transaction, _ONE_HOUR, user, _ONE_HOUR)
        yield from self._confirm("pay_reservation", transaction)
        self._take(self.prepaid, 1)
        self._credit(user, -_ONE_HOUR)
        yield from self._account(user)
        yield from self._stop(transaction, user, _REFUND_1H, first=True)
        yield from self._account(user)

    def _transfer(self) -> Scenario:
        """test_account_transfer's core: refused while funds are reserved, then the whole wallet moves, once."""
        source, destination = self.users
        self.users.reverse()  # the money goes back next time
        transfer = self._serial_id()
        params = {"transaction_id": transfer, "src_user_id": source, "dst_user_id": destination}
        balance = self.ledger.balances[source]
        if balance is not None and balance >= _ONE_HOUR:
            reserved = self._serial_id()
            descr = service_descr(VERSION, parking_id=self.prepaid, duration=60, plate=self._plate())
            yield from self._reserve(descr, reserved, _ONE_HOUR, source, _ONE_HOUR)
            self._step = "account_transfer while funds are reserved"
            self._expect((yield "account_transfer", params), "not_available", "reserved_funds_present")
            yield from self._confirm("cancel_reservation", reserved)
        self._step = "account_transfer"
        exchange = yield "account_transfer", params
        moved = self.ledger.balances[source]
        if moved is not None and moved <= 0:
            self._expect(exchange, "success", "nothing_to_transfer")
        else:
            self._expect(exchange, "success")
            self._credit(destination, Decimal(0) if moved is None else moved)
            if moved is None:
                self.ledger.balances[destination] = None
            self.ledger.balances[source] = Decimal(0)
        self._step = "account_transfer again"
        again = None if moved is None else "nothing_to_transfer" if moved <= 0 else "already_done"
        self._expect((yield "account_transfer", params), "success", again)
        yield from self._account(source)
        yield from self._account(destination)

    def _postpay(self) -> Scenario:
        """test_postpay's flow: a ticket takes a place, is quoted 15.00, paid, and leaves (the place freed)."""
        user, plate = self.users[0], self._plate()
        self._step = "issue_ticket"
        exchange = yield "issue_ticket", {"parking_id": self.postpaid}
        self._expect(exchange, "success")
        self._take(self.postpaid, 1)
        places = exchange.body.get("available_places")
        self._places(self.postpaid, places if isinstance(places, int) else -1)
        ticket = str(exchange.body.get("user_ticket"))
        descr = service_descr(VERSION, parking_id=self.postpaid, ticket=ticket, plate=plate)
        yield from self._quote(descr, user, self.postpaid, _FIRST_QUARTER)
        transaction = self._serial_id()
        yield from self._reserve(descr, transaction, _FIRST_QUARTER, user)
        yield from self._confirm("pay_reservation", transaction)
        self._step = "leave_parking"
        self._expect((yield "leave_parking", {"parking_id": self.postpaid, "user_ticket": ticket}), "success")
        self._take(self.postpaid, -1)
        self._step = "get_service_info after leaving"
        exchange = yield "get_service_info", {"service_descr": descr, "user_id": user}
        self._expect(exchange, "not_available", "user_ticket_out_of_parking")


# -- one configuration ---------------------------------------------------------------


def prepare_database(spec: ParkingLoadSpec) -> str:
    """Recreate and seed the database, add each driver's two lots; the URL the server is to use."""
    import sqlalchemy as sa

    from stratabench.systems.parking.schema import create_parking_engine, own_database, recreate, tables

    url = own_database(spec.db_url)
    engine = create_parking_engine(url)
    try:
        recreate(engine)
        with engine.begin() as connection:
            connection.execute(sa.insert(tables()["product"]), [
                {"name": name, "display_name": f"N{name}", "places_avail": places, "price": _RATES[name[-1]]}
                for name, places in spec.initial_places.items()
            ])  # fmt: skip
    finally:
        engine.dispose()
    return url


def reconcile(spec: ParkingLoadSpec) -> list[str]:
    """Every discrepancy of the database after the run, one line each (:func:`~.invariants.violations`)."""
    from stratabench.systems.parking.invariants import violations
    from stratabench.systems.parking.schema import create_parking_engine, own_database

    engine = create_parking_engine(own_database(spec.db_url))
    try:
        return violations(engine, spec.initial_places)
    finally:
        engine.dispose()


def reconciliation_failure(problems: Sequence[str]) -> str | None:
    """The one line a configuration fails with when the database does not reconcile."""
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"the database does not reconcile after the load: {problems[0]}{more}"


@contextmanager
def _server(spec: ParkingLoadSpec, url: str) -> Iterator[tuple[ParkingLoadSpec, int]]:
    """The spec with the running server's URL, and the server's process id; the server stops after."""
    from stratabench.suites.parking.process import ServerProcess

    with ServerProcess(spec.impl, url) as server:
        yield replace(spec, db_url=url, base_url=server.base_url), server.pid


@dataclass(frozen=True)
class ParkingLoadResult:
    """What one configuration measured (:attr:`load`, merged as any load) and the reconciliation's findings."""

    load: LoadResult
    discrepancies: tuple[str, ...] = field(default=())


def run_parking_load(spec: ParkingLoadSpec, runner: ClientRunner | None = None, *,
                     on_server: Callable[[int], None] | None = None,
                     spill: str | None = None) -> ParkingLoadResult:  # fmt: skip
    """Prepare the database, start the server, run the drivers, reconcile (see the module docstring).

    ``on_server`` is called with the server's process id once it listens
    (a test kills it from there); ``spill`` is where the drivers write each
    finished second (:func:`~stratabench.load.run.run_clients`). The result
    fails with one line when a driver stopped early (the server died: the
    histograms taken are kept), when an answer failed its check, or when
    the database does not reconcile.
    """
    url = prepare_database(spec)
    with _server(spec, url) as (running, pid):
        if on_server is not None:
            on_server(pid)
        reports: tuple[ClientReport, ...] = run_clients(running, runner, spill=spill)
    result = merge_reports(running, reports)
    problems = reconcile(running)
    if problems and result.error is None:
        result = replace(result, error=reconciliation_failure(problems))
    return ParkingLoadResult(result, tuple(problems))

