"""The codec plugins: one module per codec, registered with ``@CODECS.register``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stratabench.registry import Registry

if TYPE_CHECKING:
    from stratabench.layers.codecs.base import Codec

__all__ = ["CODECS"]

CODECS: Registry[type[Codec]] = Registry("codec", __name__)
