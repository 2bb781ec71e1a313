"""One worker process per backend × N (spec §8.2): ``python -m stratabench.suites.treestore.worker``.

Reads one job as JSON on stdin, runs the tests on that backend and size in
this process (they share it, as they share sysrepo's), and writes JSON
lines on stdout: first ``{"header": ...}`` (the backend's part of the
result header), then one ``{"test": number, ...}`` per test as it
finishes. A backend that cannot open writes ``{"unavailable": reason}`` or
``{"failed": reason}`` instead. Nothing else is written to stdout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from stratabench.errors import StratabenchError, UnavailableError
from stratabench.suites.treestore.backends import TREE_BACKENDS
from stratabench.suites.treestore.catalog import TESTS
from stratabench.suites.treestore.harness import run_backend
from stratabench.suites.treestore.json_codec import NAME as CODEC

__all__ = ["main", "run_job"]


def _emit(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def run_job(job: dict[str, Any]) -> None:
    """Run one job, emitting its lines."""
    try:
        backend_class = TREE_BACKENDS.get(job["backend"])
        directory = Path(job["directory"]) if job.get("directory") else None
        backend = backend_class(job["namespace"], url=job.get("url"), directory=directory)
    except UnavailableError as exc:
        _emit({"unavailable": exc.message})
        return
    except StratabenchError as exc:
        _emit({"failed": exc.message})
        return
    _emit({"header": {**backend.header(), "transport_codec": CODEC, "subscribers": "threads"}})
    wanted = set(job.get("tests") or [test.number for test in TESTS])
    tests = [test for test in TESTS if test.number in wanted]
    tries_for = {int(number): int(tries) for number, tries in (job.get("tries_for") or {}).items()}
    for outcome in run_backend(backend, int(job["n"]), tries=int(job["tries"]), tries_for=tries_for,
                               fresh_state=bool(job.get("fresh_state")), warmup=int(job.get("warmup", 0)),
                               tests=tests):
        _emit({"test": outcome.test.number, "samples_ns": outcome.samples_ns, "error": outcome.error,
               "expected": outcome.expected_hash, "actual": outcome.actual_hash, "checks": outcome.checks})


def main() -> None:
    run_job(json.loads(sys.stdin.read()))


if __name__ == "__main__":
    main()
