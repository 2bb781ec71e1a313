"""The compressor plugins: one module per compressor, registered with ``@COMPRESSORS.register``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stratabench.registry import Registry

if TYPE_CHECKING:
    from stratabench.layers.compressors.base import Compressor

__all__ = ["COMPRESSORS"]

COMPRESSORS: Registry[type[Compressor]] = Registry("compressor", __name__)
