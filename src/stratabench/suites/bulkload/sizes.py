"""The asset's size after the size compressors, a column of every bulkload row (Python's and Go's)."""

from __future__ import annotations

__all__ = ["compressed_sizes"]


def compressed_sizes(data: bytes) -> dict[str, float]:
    """Sizes of ``data`` after each size compressor that is installed (zstd, lz4), untimed.

    Keyed by metric name (``size_zstd_bytes``); a compressor whose package
    is missing is left out, as its plugin says how to install it.
    """
    from stratabench.layers.compressors import COMPRESSORS

    sizes = {}
    for name in ("zstd", "lz4"):
        if COMPRESSORS.info(name).availability.ok:
            sizes[f"size_{name}_bytes"] = float(len(COMPRESSORS.get(name)().compress(data)))
    return sizes
