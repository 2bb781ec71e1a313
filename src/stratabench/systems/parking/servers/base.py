"""The contract of a Python parking server: ten functions, one transaction each.

:meth:`ParkingService.handle` is the part every implementation shares: the
version check (``bad_protocol`` before any transaction), the business
answers raised as :class:`~stratabench.systems.parking.protocol.Answer`, and
anything else turned into the function's default status (docs/studies/parking.md §3),
logged with its traceback when logging is on. An implementation writes the
ten functions; each opens its own transaction, commits when it returns and
rolls back when it raises.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

from stratabench.systems.parking.protocol import DEFAULT_STATUS, Answer, answer, parse_version

if TYPE_CHECKING:
    from sqlalchemy import Engine

__all__ = ["ParkingService", "Params"]

#: The query parameters of one call (strings), ``service_descr`` already parsed from JSON.
Params = dict[str, Any]

_log = logging.getLogger("parking.service")


class ParkingService(ABC):
    """The ten API functions of docs/studies/parking.md §7 over one database."""

    name: ClassVar[str]

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def handle(self, function: str, params: Params) -> dict[str, Any]:
        """Answer one call of a known function: never raises."""
        try:
            version = parse_version(params)
            result: dict[str, Any] = getattr(self, function)(version, params)
            return result
        except Answer as early:
            return early.body
        except Exception:
            _log.exception("%s failed", function)
            return answer(DEFAULT_STATUS[function])

    def close(self) -> None:
        """Release connections (the engine is disposed by its owner)."""

    @abstractmethod
    def get_service_info(self, version: int, params: Params) -> dict[str, Any]: ...

    @abstractmethod
    def create_reservation(self, version: int, params: Params) -> dict[str, Any]: ...

    @abstractmethod
    def pay_reservation(self, version: int, params: Params) -> dict[str, Any]: ...

    @abstractmethod
    def cancel_reservation(self, version: int, params: Params) -> dict[str, Any]: ...

    @abstractmethod
    def stop_service(self, version: int, params: Params) -> dict[str, Any]: ...

    @abstractmethod
    def get_user_account(self, version: int, params: Params) -> dict[str, Any]: ...

    @abstractmethod
    def account_transfer(self, version: int, params: Params) -> dict[str, Any]: ...

    @abstractmethod
    def issue_ticket(self, version: int, params: Params) -> dict[str, Any]: ...

    @abstractmethod
    def leave_parking(self, version: int, params: Params) -> dict[str, Any]: ...

    @abstractmethod
    def check_plate_number(self, version: int, params: Params) -> dict[str, Any]: ...
