"""Storage backends of the treestore study: one plugin file each, ``@TREE_BACKENDS.register``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stratabench.registry import Registry

if TYPE_CHECKING:
    from stratabench.systems.treestore.backends.base import TreeBackend

__all__ = ["TREE_BACKENDS"]

TREE_BACKENDS: Registry[type[TreeBackend]] = Registry("tree backend", __name__)
