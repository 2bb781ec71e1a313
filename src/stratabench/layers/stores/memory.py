"""In-process store: a dict per namespace, the "instance memory" tier.

Needs nothing. Stores with the same namespace opened in one process share
their data, as clients of one server would; other processes see nothing.
Values are kept as the bytes given (no copy). ``memory.max_items`` makes
the namespace a bounded LRU, as an instance cache with a memory limit would
be: the least recently used key is dropped first.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from stratabench.layers.stores import STORES
from stratabench.layers.stores.base import Store
from stratabench.settings import Setting

__all__ = ["MemoryStore"]

_SPACES: dict[str, OrderedDict[bytes, bytes]] = {}


@STORES.register("memory")
class MemoryStore(Store):
    """Process memory: a dict (optionally a bounded LRU) per namespace."""

    schemes = ("memory",)
    unswept_note = "its data lives in the run's own process and ends with it"
    settings = (Setting("memory.max_items", "0", "keep at most this many keys, dropping the least recently used; "
                        "0: no limit", "whole"),)

    @classmethod
    def scratch_url(cls, directory: Path) -> str:
        return "memory://"  # a namespace of this process's own is throwaway already

    def _open(self) -> None:
        self._data = _SPACES.setdefault(self.namespace, OrderedDict())
        self._max_items = self.config.whole("memory.max_items")

    def get(self, key: bytes) -> bytes | None:
        value = self._data.get(key)
        if value is not None and self._max_items:
            self._data.move_to_end(key)
        return value

    def put(self, key: bytes, value: bytes) -> None:
        self._data[key] = value
        if self._max_items:
            self._data.move_to_end(key)
            while len(self._data) > self._max_items:
                self._data.popitem(last=False)

    def delete(self, key: bytes) -> None:
        self._data.pop(key, None)

    def keys(self) -> Iterator[bytes]:
        return iter(list(self._data))

    def get_many(self, keys: Sequence[bytes]) -> list[bytes | None]:
        return [self.get(key) for key in keys]

    def put_many(self, items: Iterable[tuple[bytes, bytes]]) -> None:
        for key, value in items:
            self.put(key, value)

    def cleanup(self) -> None:
        self._data.clear()
        _SPACES.pop(self.namespace, None)
        self._data = _SPACES.setdefault(self.namespace, OrderedDict())

    def _close(self) -> None:
        pass
