"""Where and when a run was measured: the facts a report shows first.

The results header records the environment (:mod:`stratabench.results.environment`);
:func:`provenance` turns it into labelled lines a reader can check at a
glance. Facts a header does not have are left out, so older results files
still render.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stratabench.units import format_bytes

__all__ = ["provenance"]

#: The layer packages worth naming in one line; every version stays in the results file.
_KEY_PACKAGES = ("stratabench", "orjson", "msgspec", "msgpack", "cbor2", "protobuf", "zstandard", "lz4", "lmdb",
                 "redis", "pymemcache", "psycopg", "pymysql", "pymongo", "matplotlib")


def _load(value: Any) -> str:
    """``0.52 0.61 0.70`` from the three load averages, or the one number given."""
    if isinstance(value, list | tuple):
        return " ".join(f"{float(v):.2f}" for v in value)
    return str(value)


def provenance(header: Mapping[str, Any], go_version: str | None = None) -> list[tuple[str, str]]:
    """(label, text) facts about the run, in reading order: date, machine, load, software, revision.

    ``go_version`` names the Go toolchain when the header has none (the Go
    cells record the version they were built with).
    """
    env: Mapping[str, Any] = header.get("environment") or {}
    facts: list[tuple[str, str]] = []
    if header.get("started"):
        facts.append(("date", str(header["started"]).replace("T", " ")))
    if env.get("cpu"):
        parts = [str(env["cpu"]), f"{env['cpu_count']} cores" if env.get("cpu_count") else "",
                 f"{format_bytes(env['memory_bytes'])} memory" if env.get("memory_bytes") else "",
                 str(env.get("os") or "")]
        facts.append(("machine", ", ".join(part for part in parts if part)))
    load = env.get("load_average") or header.get("load_average")
    if load:
        facts.append(("load average", f"{_load(load)} (1, 5, 15 min)"))
    software = []
    python = env.get("python") or {}
    if python.get("version"):
        software.append(f"{python.get('implementation', 'Python')} {python['version']}")
    go = env.get("go") or env.get("go_version") or go_version
    if go:
        software.append(str(go) if str(go).startswith("go") else f"Go {go}")
    if software:
        facts.append(("software", ", ".join(software)))
    packages: Mapping[str, str] = env.get("packages") or {}
    if packages:
        named = [f"{name} {packages[name]}" for name in _KEY_PACKAGES if name in packages]
        rest = len(packages) - len(named)
        facts.append(("packages", ", ".join(named) + (f" (+{rest} more in the results file)" if rest > 0 else "")))
    revision = env.get("git_revision")
    if revision:
        dirty = str(revision).endswith("-dirty")
        facts.append(("revision", str(revision)[:12] + (" (uncommitted changes)" if dirty else "")))
    if header.get("run_id"):
        facts.append(("run", str(header["run_id"])))
    return facts
