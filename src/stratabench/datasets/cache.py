"""An on-disk cache of generated datasets, shared by the worker processes of a run.

Every cell runs in a fresh worker, and generating 100,000 bulkload records
in pure Python takes a second or two, so each dataset is generated once and
kept as a pickle in the ``datasets`` directory of the one cache directory
(:func:`stratabench.build_cache.cache_root`: ``$STRATABENCH_CACHE_DIR``, else
``$XDG_CACHE_HOME/stratabench``, else ``~/.cache/stratabench``), beside the
kept builds. Entries are keyed by
dataset name, parameters and a version that changes with the generator, and
written atomically, so concurrent workers never read a partial file. The
cache only ever holds what stratabench generated itself; delete it at will.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from stratabench.build_cache import cache_root

__all__ = ["cache_dir", "cached"]

T = TypeVar("T")


def cache_dir() -> Path:
    """Where generated datasets are kept: ``datasets`` in the cache directory (not created here)."""
    return cache_root() / "datasets"


def cached(key: str, build: Callable[[], T]) -> T:
    """Return the value cached under ``key``, building and storing it if absent.

    ``key`` must name everything the value depends on, for example
    ``bulkload-v1-size100000-seed100``. A cache that cannot be read or
    written is bypassed: the value is built again, never wrong.
    """
    path = cache_dir() / f"{key}.pickle"
    try:
        with path.open("rb") as file:
            value: T = pickle.load(file)
            return value
    # ImportError: a pickle written by another version of stratabench (another
    # checkout shares the cache) may name modules this one does not have.
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError, ImportError):
        pass
    value = build()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{key}.", delete=False) as temporary:
            pickle.dump(value, temporary, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary.name, path)
    except OSError:
        pass
    return value
