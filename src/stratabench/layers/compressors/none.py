"""No compression: values pass through untouched (the baseline).

Needs nothing; returns the very object it is given, so it costs a call.
"""

from __future__ import annotations

from stratabench.layers.compressors import COMPRESSORS
from stratabench.layers.compressors.base import Compressor

__all__ = ["NoCompressor"]


@COMPRESSORS.register("none")
class NoCompressor(Compressor):
    """No compression: the value as it is."""

    def compress(self, data: bytes) -> bytes:
        return data

    def decompress(self, data: bytes) -> bytes:
        return data
