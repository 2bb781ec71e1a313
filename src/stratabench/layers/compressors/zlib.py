"""zlib (DEFLATE with the zlib header), from the standard library.

Needs nothing. Default level 6, zlib's own default and the one the cache
study's article used; levels 0 to 9 (``zlib.level``).
"""

from __future__ import annotations

import zlib

from stratabench.layers.compressors import COMPRESSORS
from stratabench.layers.compressors.base import Compressor, level_setting

__all__ = ["ZlibCompressor"]


@COMPRESSORS.register("zlib")
class ZlibCompressor(Compressor):
    """zlib (DEFLATE), level 6 by default."""

    default_level = 6
    levels = range(0, 10)
    settings = (level_setting("zlib", default_level, levels),)

    def compress(self, data: bytes) -> bytes:
        return zlib.compress(data, self._level if self._level is not None else 6)

    def decompress(self, data: bytes) -> bytes:
        return zlib.decompress(data)
