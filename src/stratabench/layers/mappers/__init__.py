"""The mapper plugins: one module per mapper, registered with ``@MAPPERS.register``."""

from __future__ import annotations

from stratabench.registry import Registry

__all__ = ["MAPPERS"]

MAPPERS: Registry[type] = Registry("mapper", __name__)
