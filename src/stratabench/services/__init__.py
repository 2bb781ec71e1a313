"""Private local servers: one module per server, registered with ``@SERVICES.register``.

``stratabench services up`` and ``run --services local`` start Redis,
memcached, PostgreSQL, MariaDB and a MongoDB-compatible server on free
loopback ports in temporary directories, and stop them by their own process
ids. See :mod:`stratabench.services.base` for the contract.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stratabench.registry import Registry

if TYPE_CHECKING:
    from stratabench.services.base import Service

__all__ = ["SERVICES"]

SERVICES: Registry[type[Service]] = Registry("service", __name__)
