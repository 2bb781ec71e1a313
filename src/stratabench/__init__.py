"""stratabench: a benchmark workbench for the data layer.

Measure what it costs to move records between storage and usable objects
(codecs, compressors, stores, caches and object mappers) on your machine and
your data. The command line is ``stratabench``; from Python, :func:`measure`
and :func:`timeit` run the same engine on your own code.
"""

from __future__ import annotations

from stratabench.api import measure, timeit

__all__ = ["measure", "timeit"]
__version__ = "0.1.0"
