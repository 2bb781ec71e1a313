"""The compressor plugins: one module per compressor, registered with ``@COMPRESSORS.register``."""

from __future__ import annotations

from stratabench.registry import Registry

__all__ = ["COMPRESSORS"]

COMPRESSORS: Registry[type] = Registry("compressor", __name__)
