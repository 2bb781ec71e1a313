"""``json-file``: the whole module tree in one JSON file per datastore (sysrepo's JSON DS file).

Files live in ``<dir>/stratabench-treestore-<namespace>/``: ``<module>.<ds>.json``
for running and operational, ``<module>.operational.<cid>-<sid>.json`` for
each owner's push data, and an empty ``<module>.<ds>.perm`` whose mode bits
are the permissions (the access check is a system call that never opens the
data). The default directory is RAM-backed (``/dev/shm``) where the OS has
one, as sysrepo's shared-memory directory is.

A store serializes the whole tree compactly to ``<file>.tmp`` (prepare) and
renames it over the file (commit): atomic, no fsync, as sysrepo. A load
reads and parses the whole file, always, whatever paths were asked for.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from stratabench.systems.treestore.backends import TREE_BACKENDS
from stratabench.systems.treestore.backends.base import (
    OPERATIONAL, Access, Owner, TreeBackend, filesystem_type, ram_directory,
)
from stratabench.systems.treestore.diff import Diff
from stratabench.systems.treestore import json_codec
from stratabench.systems.treestore.records import Scope
from stratabench.systems.treestore.schema import SchemaNode
from stratabench.systems.treestore.tree import Inner, from_document, to_document

__all__ = ["JsonFileBackend"]


@TREE_BACKENDS.register("json-file")
class JsonFileBackend(TreeBackend):
    """One JSON file per module and datastore, rewritten whole on every commit (the baseline)."""

    atomic = True

    def _open(self) -> None:
        base = self.directory or ram_directory()
        self.root = Path(base) / f"stratabench-treestore-{self.namespace}"
        with self.guard("create its directory"):
            self.root.mkdir(parents=True, exist_ok=True)

    def _file(self, module: SchemaNode, ds: str, owner: Owner | None) -> Path:
        if owner is not None:
            return self.root / f"{module.name}.{OPERATIONAL}.{owner[0]}-{owner[1]}.json"
        return self.root / f"{module.name}.{ds}.json"

    def install(self, module: SchemaNode, ds: str, access: Access) -> None:
        with self.guard("install"):
            perm = self.root / f"{module.name}.{ds}.perm"
            perm.touch()
            os.chmod(perm, access.mode)
            self._file(module, ds, None).write_bytes(b"{}")

    def uninstall(self, module: SchemaNode, ds: str) -> None:
        with self.guard("uninstall"):
            for path in self.root.glob(f"{module.name}.{ds}.*"):
                path.unlink()

    def load(self, conn: Any, module: SchemaNode, ds: str, owner: Owner | None,
             scopes: list[Scope] | None) -> Inner | None:
        path = self._file(module, ds, owner)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self.failure(f"read {path.name}", exc) from exc
        document = json_codec.loads(data)
        for member in [name for name in document if name.startswith("@")]:
            del document[member]  # origin metadata of push data: stored, not needed by the core
        return from_document(module, document)

    def store_prepare(self, conn: Any, module: SchemaNode, ds: str, owner: Owner | None,
                      diff: Diff | None, tree: Inner | None, origin: str | None) -> None:
        if tree is None and owner is not None:
            return
        document = to_document(tree)
        if origin is not None:
            document.update({f"@{name}": {"ietf-origin:origin": origin} for name in list(document)})
        with self.guard("write"):
            self._file(module, ds, owner).with_suffix(".tmp").write_bytes(json_codec.dumps(document))

    def store_commit(self, conn: Any, module: SchemaNode, ds: str, owner: Owner | None,
                     diff: Diff | None, tree: Inner | None, origin: str | None) -> None:
        path = self._file(module, ds, owner)
        with self.guard("write"):
            if tree is None and owner is not None:
                path.unlink(missing_ok=True)
            else:
                os.replace(path.with_suffix(".tmp"), path)

    def access(self, conn: Any, module: SchemaNode, ds: str) -> tuple[bool, bool]:
        perm = str(self.root / f"{module.name}.{ds}.perm")
        return os.access(perm, os.R_OK), os.access(perm, os.W_OK)

    def last_modified(self, conn: Any, module: SchemaNode, ds: str) -> int | None:
        try:
            return self._file(module, ds, None).stat().st_mtime_ns
        except FileNotFoundError:
            return None

    def owners(self, conn: Any, module: SchemaNode) -> list[Owner]:
        found = []
        for path in self.root.glob(f"{module.name}.{OPERATIONAL}.*-*.json"):
            cid, _, sid = path.name.split(".")[2].partition("-")
            found.append((int(cid), int(sid)))
        return found

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def header(self) -> dict[str, Any]:
        return {**super().header(), "json_dir": str(self.root.parent),
                "json_dir_filesystem": filesystem_type(self.root.parent)}
