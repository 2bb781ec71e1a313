"""Zstandard with the ``zstandard`` package, level 3 by default.

Needs ``zstandard`` (``stratabench[compressors]``). Levels 1 to 22
(``zstd.level``). Frames record the content size, so decompression
allocates once; one compressor and one decompressor object are reused
across calls, as a long-running service would.
"""

from __future__ import annotations

from typing import Any

from stratabench.layers.compressors import COMPRESSORS
from stratabench.layers.compressors.base import Compressor, level_setting

__all__ = ["ZstdCompressor"]


@COMPRESSORS.register("zstd", requires=("zstandard",), extra="compressors")
class ZstdCompressor(Compressor):
    """Zstandard, level 3 by default."""

    default_level = 3
    levels = range(1, 23)
    settings = (level_setting("zstd", default_level, levels),)

    def __init__(self, *, level: int | None = None) -> None:
        super().__init__(level=level)
        import zstandard

        self._compressor: Any = zstandard.ZstdCompressor(level=self._level or 3, write_content_size=True)
        self._decompressor: Any = zstandard.ZstdDecompressor()

    def compress(self, data: bytes) -> bytes:
        compressed: bytes = self._compressor.compress(data)
        return compressed

    def decompress(self, data: bytes) -> bytes:
        plain: bytes = self._decompressor.decompress(data)
        return plain
