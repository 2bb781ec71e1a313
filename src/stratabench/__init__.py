"""stratabench: a benchmark workbench for the data layer.

Measure what it costs to move records between storage and usable objects
(codecs, compressors, stores, caches and object mappers) on your machine and
your data. The command line is ``stratabench``; from Python, :func:`measure`
and :func:`timeit` run the same engine on your own code.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

# stratabench starts its workers and servers with a parent-death signal armed between fork and exec
# (stratabench.lifeline: a preexec_fn, so a real fork). gRPC (loaded by the entities study's ndb and
# Datastore mappers) restarts its poller thread in a forked child when its fork support is on, and
# that thread aborts the child once subprocess closes the child's descriptors: grpc/grpc#43055, in
# grpcio 1.80 and later. 8 to 13 of 300 such children died here with an active channel; none with
# fork support off. Set before any module of ours imports grpc; a worker forked from the zygote
# never inherits a channel (the zygote only imports), which is the case gRPC supports without it.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

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
