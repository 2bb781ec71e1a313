"""``redis+search``: the faithful sysrepo layout on Redis with RediSearch 2.x (reported unavailable here).

sysrepo's Redis plugin keeps a search index over its node hashes and loads
with aggregate queries sorted by sort key (docs/studies/treestore.md §6.3). This backend checks
the server's modules first: without a RediSearch that accepts the plugin's
commands (``search`` / ``ft`` 2.x, as in Redis Stack), it is unavailable,
with the reason; Debian's redis-server has none. The layout itself is not
written yet, so even a server with the module gets a clear "not
implemented" rather than figures that would not be the faithful layout.
"""

from __future__ import annotations

from typing import Any

from stratabench.errors import UnavailableError
from stratabench.systems.treestore.backends import TREE_BACKENDS
from stratabench.systems.treestore.backends.redis import RedisBackend

__all__ = ["RedisSearchBackend", "search_module"]


def search_module(client: Any) -> tuple[str, int] | None:
    """(name, version) of the server's RediSearch module, or ``None``."""
    for module in client.module_list():
        name = module.get("name") if isinstance(module, dict) else None
        if name is not None and str(name).lower() in ("search", "ft"):
            return str(name), int(module.get("ver", 0))
    return None


@TREE_BACKENDS.register("redis+search", requires=("redis",), extra="stores")
class RedisSearchBackend(RedisBackend):
    """sysrepo's RediSearch layout on Redis Stack; unavailable without RediSearch 2.x."""

    def _open(self) -> None:
        super()._open()
        with self.guard("list modules"):
            found = search_module(self._admin)
        self._admin.close()
        if found is None or found[1] < 20000:
            have = "no search module" if found is None else f"{found[0]} version {found[1]}"
            raise UnavailableError(f"redis+search: the server at {self.address} has {have}; it needs "
                                   "RediSearch 2.x (Redis Stack); the core-command layout `redis` runs instead")
        raise UnavailableError("redis+search: the RediSearch layout is not implemented yet; use `redis`")
