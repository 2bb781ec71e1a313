"""Each finished second of a client, on disk as it finishes: what a ``kill -9`` of the load leaves to keep.

A client reports its histograms once, at its end, and an interrupted load
keeps the seconds every client finished (:func:`~stratabench.load.run.interrupted_result`)
only when it lives to read those reports: Ctrl-C, SIGTERM and SIGHUP. A
``kill -9`` (or the kernel's out-of-memory killer) ends it at once. So a
client given a spill directory also appends each interval of its window to
``client-<index>.jsonl`` there the moment the interval is over, one JSON
line each: the interval's number and encoded histogram, and the client's
counts so far (by kind, errors, failed checks, busy CPU, wall time). The
next command rebuilds each client's report from its file
(:func:`spilled_seconds`) and keeps the intervals every client finished, by
the same rule as the signal path (:mod:`stratabench.load.recovery`).

The line is written with one ``write`` on a file opened for appending, and
never synced: a crash of the machine may lose lines, and a kill in the
middle of a write may leave the last one torn, which the reader skips. Each
line names its interval, so a skipped line ends the client's run of
intervals there and nothing after it is read as the wrong second. Writing
costs the client 1 to 5 ms once a second (encoding the histogram), between
two requests: a closed loop sends that much less, and an open loop sends
the request due meanwhile that much late, which its latency counts.

Python clients (local processes) and Go clients (``go/internal/loadclient``,
the same lines) spill; clients on a Dask cluster do not (see
:mod:`stratabench.load.cluster`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["FIELDS", "SecondsSpill", "client_file", "spilled_seconds"]

#: What each line holds: the interval, its histogram, and the client's report so far.
FIELDS = ("index", "interval", "histogram", "kinds", "errors", "first_error", "failed_checks", "first_failed_check",
           "busy_cpu_s", "wall_s", "host_busy", "host", "pid", "host_cpus")


def client_file(directory: str | Path, index: int) -> Path:
    """The file client ``index`` spills its seconds to in ``directory``."""
    return Path(directory) / f"client-{index}.jsonl"


class SecondsSpill:
    """One client's spill file, appended to a line per finished interval; a file that cannot be written is given up.

    Losing the spill must never stop a measurement: an error opening or
    writing the file ends the spilling, silently, and the client runs on.
    """

    def __init__(self, directory: str, index: int) -> None:
        try:
            self._fd: int | None = os.open(client_file(directory, index),
                                           os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            self._fd = None

    def write(self, second: Mapping[str, Any]) -> None:
        """Append one interval's line (the fields of :data:`FIELDS`)."""
        if self._fd is None:
            return
        try:
            os.write(self._fd, (json.dumps(second, separators=(",", ":")) + "\n").encode())
        except (OSError, ValueError):
            self.close()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def spilled_seconds(path: Path) -> list[dict[str, Any]]:
    """The lines of one client's file (:func:`client_file`) for intervals 0, 1, 2...: up to the first missing one.

    A torn line, or one of another shape, is skipped: the run of intervals
    ends where it was.
    """
    try:
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return []
    by_interval: dict[int, dict[str, Any]] = {}
    for line in text.splitlines():
        try:
            second = json.loads(line)
        except ValueError:
            continue  # torn by the kill
        if isinstance(second, dict) and all(name in second for name in FIELDS) \
                and isinstance(second["interval"], int):
            by_interval.setdefault(second["interval"], second)
    run: list[dict[str, Any]] = []
    while len(run) in by_interval:
        run.append(by_interval[len(run)])
    return run
