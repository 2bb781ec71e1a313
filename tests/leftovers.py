"""The test command's last check: no process it started is still running.

``scripts/test`` makes a directory of its own for the run (``mktemp``), holds
the run's caches and ``TMPDIR`` in it, and names it in ``STRATABENCH_TEST_RUN``.
A process is the run's when that variable, with this directory, is in its
environment (the tests, the browser, zygotes and workers inherit it), or when
the directory is in its command line, working directory or environment (the
servers get a cleaned environment, but their ``HOME``, ``TMPDIR`` and working
directory are a temporary directory in it). Processes of other runs (other
users, or this user's other checkouts testing at the same time) name another
directory, and are never reported or touched.

What is left after a grace period is listed, killed (it is this run's), and
the exit status is 1::

    python -m tests.leftovers RUN_DIR
"""

from __future__ import annotations

import os
import re
import sys
import time

import psutil

__all__ = ["RUN_ENV", "main", "run_processes"]

#: The variable scripts/test sets to the run's directory.
RUN_ENV = "STRATABENCH_TEST_RUN"
#: Seconds for processes that are ending as the suite ends (a server's SIGKILL in flight) to go.
GRACE_S = 10.0


def run_processes(run_dir: str) -> list[psutil.Process]:
    """The running processes of the test run that owns ``run_dir``, but this one and its ancestors."""
    inside = re.compile(re.escape(run_dir.rstrip("/")) + "(/|$)")
    own = {os.getpid(), *(parent.pid for parent in psutil.Process().parents())}
    found: list[psutil.Process] = []
    for process in psutil.process_iter():
        if process.pid in own:
            continue
        try:
            environment = process.environ()
            texts = [*process.cmdline(), process.cwd(), *environment.values()]
        except (psutil.NoSuchProcess, psutil.AccessDenied):  # gone, a zombie, or not ours to read
            continue
        if environment.get(RUN_ENV) == run_dir or any(inside.search(text) for text in texts):
            found.append(process)
    return found


def _describe(process: psutil.Process) -> str:
    try:
        age = time.time() - process.create_time()
        return f"pid {process.pid}, {age:.0f} s old: {' '.join(process.cmdline())[:200]}"
    except psutil.Error:
        return f"pid {process.pid} (ended meanwhile)"


def main(argv: list[str]) -> int:
    """Wait up to :data:`GRACE_S` for the run's processes to end; report and kill what is left."""
    if len(argv) != 1 or not os.path.isdir(argv[0]):
        print("usage: python -m tests.leftovers RUN_DIR (the test run's own directory)", file=sys.stderr)
        return 2
    run_dir = argv[0]
    deadline = time.monotonic() + GRACE_S
    while (left := run_processes(run_dir)) and time.monotonic() < deadline:
        time.sleep(0.5)
    if not left:
        return 0
    print(f"error: {len(left)} process(es) started by this test run are still running after it; "
          "a test or fixture did not stop them (killed now):", file=sys.stderr)
    for process in left:
        print(f"  {_describe(process)}", file=sys.stderr)
    for process in left:
        try:
            process.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(left, timeout=5)
    for process in alive:
        try:
            process.kill()
        except psutil.Error:
            pass
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
