"""The Python parking servers, one module each, registered by name (``python-orm``, ``python-core``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stratabench.registry import Registry

if TYPE_CHECKING:
    from stratabench.systems.parking.servers.base import ParkingService

__all__ = ["SERVERS"]

SERVERS: Registry[type[ParkingService]] = Registry("parking server", __name__)
