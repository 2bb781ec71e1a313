"""The store plugins: one module per store, registered with ``@STORES.register``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stratabench.registry import Registry

if TYPE_CHECKING:
    from stratabench.layers.stores.base import Store

__all__ = ["STORES"]

STORES: Registry[type[Store]] = Registry("store", __name__)
