"""The environment a run measured on: machine, CPU, Python, packages, git.

The packages recorded are derived, never listed by hand: stratabench, what it
always installs, and the distributions providing what each registered plugin
declares it requires, so a new plugin's library is recorded the moment the
plugin is registered.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["cpu_governor", "environment", "load_average", "package_versions", "scheduler_counters"]


def _requirements() -> list[tuple[str, bool]]:
    """Each distribution stratabench declares, and whether it comes only with an extra."""
    try:
        declared = metadata.requires("stratabench") or []
    except metadata.PackageNotFoundError:
        return []
    requirements = []
    for requirement in declared:
        name = re.match(r"[A-Za-z0-9._-]+", requirement)
        if name:
            marker = requirement.split(";", 1)[1] if ";" in requirement else ""
            requirements.append((name.group(0), "extra" in marker))
    return requirements


def _files(name: str) -> list[str]:
    try:
        return [str(file) for file in metadata.files(name) or ()]
    except metadata.PackageNotFoundError:
        return []


def package_versions(modules: Iterable[str] = ()) -> dict[str, str]:
    """Installed versions of stratabench, what it always installs, and the providers of ``modules``.

    Parameters
    ----------
    modules
        Importable module names, as plugins declare them in their
        registration (``requires=("google.cloud.ndb",)``). Each is recorded
        as the distribution, among those stratabench declares (its extras
        included), whose files hold it: ``google-cloud-ndb``. A module that
        is not installed is left out.
    """
    requirements = _requirements()
    names = ["stratabench", *(name for name, extra in requirements if not extra)]
    # Only the declared distributions are searched: reading every installed
    # one's file list costs a second at the start of each run.
    files = {name: _files(name) for name, extra in requirements if extra}
    for module in modules:
        path = module.replace(".", "/")
        names += [name for name, held in files.items() if any(f.startswith((path + "/", path + ".")) for f in held)]
    versions = {}
    for name in dict.fromkeys(names):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> list[float] | None:
    """The 1, 5 and 15-minute load averages, or ``None`` where the system has none.

    Recorded at a run's start and end: a load above the core count means
    other work competed with the measurement.
    """
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def scheduler_counters(when: str) -> dict[str, float | None]:
    """The host's steal time (``/proc/stat``, every CPU since boot) and this process's run-queue wait
    (``/proc/self/schedstat``), in seconds, keyed ``steal_s_<when>`` and ``run_queue_wait_s_<when>``.

    Recorded at a run's start and end: steal that grows during the run is
    time the hypervisor gave other guests; run-queue wait is time this
    process was ready but had no CPU. ``None`` where the system has no such file.
    """
    steal = wait = None
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = stat.readline().split()
        if fields and fields[0] == "cpu" and len(fields) > 8:
            steal = round(int(fields[8]) / os.sysconf("SC_CLK_TCK"), 2)
    except (OSError, ValueError):
        pass
    try:
        with open("/proc/self/schedstat", encoding="ascii") as schedstat:
            wait = round(int(schedstat.read().split()[1]) / 1e9, 3)
    except (OSError, ValueError, IndexError):
        pass
    return {f"steal_s_{when}": steal, f"run_queue_wait_s_{when}": wait}


def cpu_governor() -> str | None:
    """The CPU frequency governor (``performance``, ``powersave``...), or ``None`` where it cannot be read.

    Several distinct governors are listed, comma-separated, in CPU order.
    """
    found = []
    for path in sorted(Path("/sys/devices/system/cpu").glob("cpu[0-9]*/cpufreq/scaling_governor")):
        try:
            found.append(path.read_text().strip())
        except OSError:
            continue
    return ",".join(dict.fromkeys(found)) or None


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


def environment(plugin_modules: Iterable[str] = ()) -> dict[str, Any]:
    """Facts about this machine and installation, for the results header.

    Parameters
    ----------
    plugin_modules
        What the registered plugins require (their ``requires``): the
        versions of the distributions providing them are recorded, see
        :func:`package_versions`.
    """
    import psutil

    packages = package_versions(plugin_modules)
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
        "cpu_governor": cpu_governor(),
        "load_average_start": load_average(),
        **scheduler_counters("start"),
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
