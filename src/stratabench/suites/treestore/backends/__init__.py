"""Storage backends of the treestore study: one plugin file each, ``@TREE_BACKENDS.register``."""

from __future__ import annotations

from stratabench.registry import Registry

__all__ = ["TREE_BACKENDS"]

TREE_BACKENDS: Registry[type] = Registry("tree backend", __name__)
