"""Code size of each parking server: its own logic, its data model, and what it shares.

The study compared 20.4 KB of business logic and 3.4 KB of model (SQLAlchemy)
with 22.5 KB and 5.7 KB (YB.ORM). Our servers are split differently — the two
Python servers share the HTTP front and the protocol rules, the two Go servers
share their business logic and differ in their store — so each is measured
as three parts, in bytes of source (Go test files excluded). A part whose
files are not in this checkout (an installed package has no Go source) is
``None``.
"""

from __future__ import annotations

from pathlib import Path

from stratabench.systems import parking

__all__ = ["PARTS", "code_size"]

_PACKAGE = Path(parking.__file__).resolve().parent  # the Python servers live in systems/parking
_GO = Path(__file__).resolve().parents[4] / "go"
_GO_PARKING = _GO / "internal" / "parking"

#: Server → part → files or directories (relative to :mod:`stratabench.systems.parking`, or to ``go/`` for ``go:`` entries).
PARTS: dict[str, dict[str, tuple[str, ...]]] = {
    "python-orm": {
        "logic": ("servers/python_orm.py",),
        "model": ("orm_model.py", "schema.py"),
        "shared": ("protocol.py", "servers/base.py", "http_server.py", "serve.py"),
    },
    "python-core": {
        "logic": ("servers/python_core.py",),
        "model": ("schema.py",),
        "shared": ("protocol.py", "servers/base.py", "http_server.py", "serve.py"),
    },
    "go-orm": {
        "logic": ("go:internal/parking/gormstore/store.go",),
        "model": ("go:internal/parking/gormstore/models.go",),
        "shared": ("go:internal/parking/service", "go:internal/parking/rules", "go:internal/parking/httpapi",
                   "go:internal/parking/database", "go:cmd/stratabench-parking"),  # fmt: skip
    },
    "go-sql": {
        "logic": ("go:internal/parking/sqlstore",),
        "model": ("go:internal/parking/database/ddl.go",),
        "shared": ("go:internal/parking/service", "go:internal/parking/rules", "go:internal/parking/httpapi",
                   "go:internal/parking/database/open.go", "go:cmd/stratabench-parking"),  # fmt: skip
    },
}


def _files(entry: str) -> list[Path] | None:
    path = _GO / entry[3:] if entry.startswith("go:") else _PACKAGE / entry
    if path.is_file():
        return [path]
    if path.is_dir():
        suffix = ".go" if entry.startswith("go:") else ".py"
        return [f for f in sorted(path.rglob(f"*{suffix}")) if not f.name.endswith("_test.go")]
    return None


def code_size() -> dict[str, dict[str, int | None]]:
    """Server → part (``logic``, ``model``, ``shared``) → bytes of source, None when not in this checkout."""
    sizes: dict[str, dict[str, int | None]] = {}
    for server, parts in PARTS.items():
        sizes[server] = {}
        for part, entries in parts.items():
            found = [_files(entry) for entry in entries]
            sizes[server][part] = None if any(f is None for f in found) else sum(
                file.stat().st_size for files in found if files for file in files)  # fmt: skip
    return sizes
