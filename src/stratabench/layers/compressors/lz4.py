"""LZ4 frame format with the ``lz4`` package, at its default level.

Needs ``lz4`` (``stratabench[compressors]``). Uses the frame format (with
content size and checksum, interoperable with the ``lz4`` command line),
not raw blocks. Level 0 is the fast default; 3 to 16 select LZ4-HC
(``lz4.level``).
"""

from __future__ import annotations

from typing import Any

from stratabench.layers.compressors import COMPRESSORS
from stratabench.layers.compressors.base import Compressor, level_setting

__all__ = ["Lz4Compressor"]


@COMPRESSORS.register("lz4", requires=("lz4",), extra="compressors")
class Lz4Compressor(Compressor):
    """LZ4 frames, default (fast) level."""

    default_level = 0
    levels = range(-16, 17)
    settings = (level_setting("lz4", default_level, levels),)
    #: Imported once by a run's zygotes (a suite's ``preload`` names it), not in each visit that makes one (2 ms).
    preload = ("lz4.frame",)

    def __init__(self, *, level: int | None = None) -> None:
        super().__init__(level=level)
        import lz4.frame

        # Bound once: an import statement inside compress() would be timed on every call.
        self._compress: Any = lz4.frame.compress
        self._decompress: Any = lz4.frame.decompress

    def compress(self, data: bytes) -> bytes:
        compressed: bytes = self._compress(data, compression_level=self._level or 0, store_size=True)
        return compressed

    def decompress(self, data: bytes) -> bytes:
        plain: bytes = self._decompress(data)
        return plain
