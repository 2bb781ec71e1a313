"""One worker process per backend × N (docs/studies/treestore.md §8.2): ``python -m stratabench.suites.treestore.worker``.

Reads one job as a JSON line on stdin and opens its backend, then runs the
tests on that backend and size in this process (they share it, as they
share sysrepo's) one at a time, each when the parent asks for it with a
line ``{"test": number}``; end of input ends the run (uninstall, clean up).
The parent asks every backend's worker for the same test back to back, so
a change in the machine's load between tests hits all backends alike.

On stdout, JSON lines: first ``{"header": ...}`` (the backend's part of the
result header), then one ``{"test": number, ...}`` per test as it finishes.
A backend that cannot open writes ``{"unavailable": reason}`` or
``{"failed": reason}`` instead. Nothing else is written to stdout.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from stratabench.errors import StratabenchError, UnavailableError
from stratabench.systems.treestore.backends import TREE_BACKENDS
from stratabench.suites.treestore.catalog import TESTS, TreeTest
from stratabench.systems.treestore.cores import DEFAULT_CORE
from stratabench.suites.treestore.harness import Asked, MoreTries, SliceFill, run_backend
from stratabench.systems.treestore import json_codec

__all__ = ["main", "run_job"]


def _emit(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def _asked(commands: TextIO, tests: list[TreeTest]) -> Iterator[TreeTest | Asked]:
    """The tests the parent asks for, as it asks; ``{"ready": true}`` first, once the module is installed.

    Nothing of this worker runs while the parent measures another backend:
    it waits on its input, its setup done before it says it is ready. A
    line with ``tries`` (and ``warmup``, ``untimed_limit_ns``) asks for one slice of a test, in
    any order and again later; one without moves forward through the tests.
    """
    remaining = list(tests)
    by_number = {test.number: test for test in tests}
    _emit({"ready": True})
    for line in commands:
        command = json.loads(line)
        number = int(command["test"])
        if "tries" in command:
            limit, fill = command.get("untimed_limit_ns"), command.get("fill")
            yield Asked(by_number[number], int(command["tries"]), int(command.get("warmup", 0)),
                        None if limit is None else int(limit), None if fill is None else SliceFill(**fill))
            continue
        while remaining and remaining[0].number != number:
            remaining.pop(0)  # not asked for (its cell was dropped): tests only move forward
        if not remaining:
            return
        yield remaining.pop(0)


def run_job(job: dict[str, Any], commands: TextIO | None = None) -> None:
    """Run one job, emitting its lines; with ``commands``, each test when a line asks for it, else all."""
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
    _emit({"header": {**backend.header(), "transport_codec": json_codec.name(), "subscribers": "threads"}})
    wanted = set(job.get("tests") or [test.number for test in TESTS])
    chosen = [test for test in TESTS if test.number in wanted]
    tests: Iterable[TreeTest | Asked] = chosen if commands is None else _asked(commands, chosen)
    tries_for = {int(number): int(tries) for number, tries in (job.get("tries_for") or {}).items()}
    more = MoreTries(**job["more"]) if job.get("more") else None
    for outcome in run_backend(backend, int(job["n"]), tries=int(job["tries"]), tries_for=tries_for,
                               fresh_state=bool(job.get("fresh_state")), warmup=int(job.get("warmup", 0)),
                               more=more, tests=tests, core_name=str(job.get("core") or DEFAULT_CORE)):
        _emit({"test": outcome.test.number, "samples_ns": outcome.samples_ns, "error": outcome.error,
               "expected": outcome.expected_hash, "actual": outcome.actual_hash, "checks": outcome.checks,
               "warmup": outcome.warmup, "more": None if outcome.more is None else outcome.more.to_json(),
               "target_missed": outcome.target_missed})


def main() -> None:
    run_job(json.loads(sys.stdin.readline()), sys.stdin)


if __name__ == "__main__":
    main()
