"""The store plugins: one module per store, registered with ``@STORES.register``."""

from __future__ import annotations

from stratabench.registry import Registry

__all__ = ["STORES"]

STORES: Registry[type] = Registry("store", __name__)
