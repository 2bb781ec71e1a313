"""The codec plugins: one module per codec, registered with ``@CODECS.register``."""

from __future__ import annotations

from stratabench.registry import Registry

__all__ = ["CODECS"]

CODECS: Registry[type] = Registry("codec", __name__)
