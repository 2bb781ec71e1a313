"""The mapper plugins: one module per mapper, registered with ``@MAPPERS.register``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stratabench.registry import Registry

if TYPE_CHECKING:
    from stratabench.layers.mappers.base import Mapper

__all__ = ["MAPPERS"]

MAPPERS: Registry[type[Mapper]] = Registry("mapper", __name__)
