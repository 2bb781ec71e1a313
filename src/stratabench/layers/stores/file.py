"""A directory of files: one file per key, the simplest durable store.

Needs nothing. ``file:///some/dir`` keeps this namespace's files in
``/some/dir/stratabench-{namespace}/``; other files in ``/some/dir`` are
never read or touched. File names are ``k`` + the key in lowercase base32,
so binary keys work and names stay valid on case-insensitive file systems;
that limits keys to about 155 bytes. Writes go to a temporary file that is
renamed over the old one, so a reader never sees half a value. Nothing is
fsynced: this measures the file system's cache, like the other stores'
default durability. ``stratabench clean`` finds the directories of runs
(:class:`~stratabench.layers.stores.base.Sweepable`) among
``stratabench-*``.
"""

from __future__ import annotations

import base64
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from stratabench.errors import UsageError
from stratabench.layers.stores import STORES
from stratabench.layers.stores.base import Store
from stratabench.layers.stores.namespaces import RUN_NAMESPACE_PATTERN, swept_name

__all__ = ["FileStore"]

_MAX_NAME = 255
_DIR_PREFIX = "stratabench-"


def _file_name(key: bytes) -> str:
    return "k" + base64.b32encode(key).decode().rstrip("=").lower()


def _key_of(name: str) -> bytes | None:
    if not name.startswith("k"):
        return None
    encoded = name[1:].upper()
    try:
        return base64.b32decode(encoded + "=" * (-len(encoded) % 8))
    except ValueError:
        return None


@STORES.register("file")
class FileStore(Store):
    """A directory with one file per key."""

    schemes = ("file",)

    @classmethod
    def scratch_url(cls, directory: Path) -> str:
        return f"file://{directory}/files"

    def _open(self) -> None:
        if not self.path:
            raise UsageError(f"store URL {self.redacted_url!r} names no directory; use file:///path/to/dir")
        self._dir = Path(self.path) / f"{_DIR_PREFIX}{self.namespace}"
        if self.sweeping:
            if not Path(self.path).is_dir():
                raise UsageError(f"store URL {self.redacted_url!r}: no such directory to clean")
            return
        try:
            self._dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self._unreachable(exc) from exc

    def _file(self, key: bytes) -> Path:
        name = _file_name(key)
        if len(name) > _MAX_NAME:
            raise UsageError(f"key of {len(key)} bytes is too long for the file store (at most 155 bytes)")
        return self._dir / name

    def get(self, key: bytes) -> bytes | None:
        path = self._file(key)
        with self._guard("get"):
            try:
                return path.read_bytes()
            except FileNotFoundError:
                return None

    def put(self, key: bytes, value: bytes) -> None:
        path = self._file(key)
        with self._guard("put"):
            try:
                fd, temporary = tempfile.mkstemp(dir=self._dir, prefix=".tmp-")
            except FileNotFoundError:
                # After cleanup() the namespace's directory is gone; a put starts it again.
                self._dir.mkdir(parents=True, exist_ok=True)
                fd, temporary = tempfile.mkstemp(dir=self._dir, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(value)
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise

    def delete(self, key: bytes) -> None:
        path = self._file(key)
        with self._guard("delete"):
            path.unlink(missing_ok=True)

    def keys(self) -> Iterator[bytes]:
        with self._guard("keys"):
            names = os.listdir(self._dir) if self._dir.exists() else []
        for name in names:
            key = _key_of(name)
            if key is not None:
                yield key

    def cleanup(self) -> None:
        with self._guard("cleanup"):
            if self._dir.exists():
                shutil.rmtree(self._dir)

    def list_namespaces(self) -> list[str]:
        with self._guard("list namespaces"):
            entries = [entry for entry in Path(self.path).iterdir() if entry.is_dir() and not entry.is_symlink()]
        return sorted(
            entry.name[len(_DIR_PREFIX) :]
            for entry in entries
            if entry.name.startswith(_DIR_PREFIX) and RUN_NAMESPACE_PATTERN.match(entry.name[len(_DIR_PREFIX) :])
        )

    def drop_namespace(self, name: str) -> None:
        directory = Path(self.path) / f"{_DIR_PREFIX}{swept_name(name, RUN_NAMESPACE_PATTERN)}"
        with self._guard("drop namespace"):
            if directory.is_dir() and not directory.is_symlink():
                shutil.rmtree(directory)

    def _close(self) -> None:
        pass
