"""stratabench: a benchmark workbench for the data layer.

Measure what it costs to move records between storage and usable objects
(codecs, compressors, stores, caches and object mappers) on your machine and
your data. The command line is ``stratabench``; from Python, :func:`measure`
and :func:`timeit` run the same engine on your own code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stratabench.api import measure, timeit

__all__ = ["measure", "timeit"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # PEP 562: the engine loads on first use, so importing a low module (stratabench.errors, a system
    # under test such as stratabench.systems.parking.protocol) does not load the harness with it.
    if name in __all__:
        from stratabench import api

        return getattr(api, name)
    raise AttributeError(f"module 'stratabench' has no attribute {name!r}")
