"""``sqlite@disk``: the ``sqlite`` backend with its file in the system temporary directory, not in RAM."""

from __future__ import annotations

import tempfile
from pathlib import Path

from stratabench.systems.treestore.backends import TREE_BACKENDS
from stratabench.systems.treestore.backends.sqlite import SqliteBackend

__all__ = ["SqliteDiskBackend"]


@TREE_BACKENDS.register("sqlite@disk")
class SqliteDiskBackend(SqliteBackend):
    """The sqlite backend on the disk-backed system temporary directory."""

    def _default_directory(self) -> Path:
        return Path(tempfile.gettempdir())
