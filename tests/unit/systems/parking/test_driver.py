"""The driver against an in-process server: a conforming one passes, a wrong answer names the call."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stratabench.systems.parking.driver import SuiteDriver
from stratabench.systems.parking.http_server import ParkingHTTPServer
from stratabench.systems.parking.protocol import Answer, answer
from stratabench.systems.parking.schema import create_parking_engine, recreate
from stratabench.systems.parking.servers.base import ParkingService, Params
from stratabench.systems.parking.servers.python_core import PythonCoreService


class PlateAlwaysPaid(PythonCoreService):
    """A server with one bug: every plate is paid."""

    def check_plate_number(self, version: int, params: Params) -> dict[str, Any]:
        raise Answer(answer("success", paid="true"))


def serve(service: ParkingService) -> Iterator[str]:
    server = ParkingHTTPServer(0, service)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        service.close()
        thread.join()


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Any]:
    engine = create_parking_engine(f"sqlite:///{tmp_path / 'p.db'}")
    recreate(engine)
    yield engine
    engine.dispose()


def test_a_conforming_server_passes_with_table_1s_calls(engine: Any) -> None:
    for url in serve(PythonCoreService(engine)):
        result = SuiteDriver(url, seed=7).run()
        assert result.ok, result.failure
        assert sum(result.calls.values()) == 68
        assert result.calls["get_service_info"] == 22


def test_a_wrong_answer_fails_the_run_naming_test_step_call_and_answer(engine: Any) -> None:
    for url in serve(PlateAlwaysPaid(engine)):
        result = SuiteDriver(url, seed=7).run()
    assert result.failure is not None
    assert result.failure.startswith("test_prepay step 'plate before payment': expected paid = 'false'; "
                                     "GET /check_plate_number?registration_plate=")  # fmt: skip
    assert '"paid": "true"' in result.failure
    assert list(result.calls_per_test) == ["test_account_transfer", "test_parking_account", "test_postpay",
                                           "test_prepay"]  # fmt: skip


def test_a_url_without_a_port_is_refused_in_one_line() -> None:
    from stratabench.errors import UsageError

    with pytest.raises(UsageError, match="http://HOST:PORT/"):
        SuiteDriver("ftp://example")
