"""Where builds that outlive a run are kept, and how they are named: by their content.

Building the Go programs, and above all the bulkload study's embed asset (a
20 MB Go source whose compile takes half a minute and gigabytes of memory),
on every run would dominate the run. A build is therefore kept in a cache
directory outside ``results/`` under a key derived from everything it
depends on (the sources' bytes, the Go version, the dataset's size and
seed): a change to any of them names a new entry, so a stale build is never
reused, and nothing needs invalidating by hand. ``stratabench run
--rebuild`` forces new builds anyway.

The directory is ``$STRATABENCH_CACHE_DIR`` if set, else
``$XDG_CACHE_HOME/stratabench``, else ``~/.cache/stratabench``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["CACHE_DIR_ENV", "cache_root", "content_key"]

#: Environment variable that chooses the cache directory.
CACHE_DIR_ENV = "STRATABENCH_CACHE_DIR"


def cache_root() -> Path:
    """The cache directory (not created here)."""
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "stratabench"


def content_key(parts: Iterable[str], files: Iterable[Path] = (), *, root: Path | None = None) -> str:
    """A short hex digest of ``parts`` and of the names and bytes of ``files``.

    File names are taken relative to ``root`` when given, so that the same
    sources in two checkouts give the same key.
    """
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() + b"\0")
    for path in sorted(files):
        name = str(path.relative_to(root)) if root is not None else str(path)
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:24]
