"""The environment a run measured on: machine, CPU, Python, packages, git."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["environment"]

#: Distributions whose versions change results; recorded when installed.
_PACKAGES = (
    "stratabench", "orjson", "msgpack", "msgspec", "cbor2", "protobuf", "zstandard", "lz4", "lmdb", "redis",
    "pymemcache", "psycopg", "pymysql", "pymongo", "google-cloud-ndb", "google-cloud-datastore", "psutil",
)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git_revision() -> str | None:
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    revision = out.stdout.strip()
    if out.returncode != 0 or not revision:
        return None
    dirty = subprocess.run(
        ["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True, text=True, timeout=5, check=False,
    ).stdout.strip()
    return revision + ("-dirty" if dirty else "")


def environment() -> dict[str, Any]:
    """Facts about this machine and installation, for the results header."""
    import psutil

    packages = {}
    for name in _PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    try:
        from google.protobuf.internal import api_implementation

        protobuf_backend: str | None = api_implementation.Type()
    except ImportError:
        protobuf_backend = None
    return {
        "hostname": platform.node(),
        "os": f"{platform.system()} {platform.release()}",
        "machine": platform.machine(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "memory_bytes": psutil.virtual_memory().total,
        "python": {
            "implementation": platform.python_implementation(),
            "version": platform.python_version(),
            "executable": sys.executable,
        },
        "packages": packages,
        "protobuf_backend": protobuf_backend,
        "git_revision": _git_revision(),
    }
