"""Exact counts: a Python cell's instructions per operation, under Valgrind's callgrind (the parent's side).

A time moves with the machine; an instruction count does not. With
``--count instructions`` each Python cell runs in a fresh interpreter under
callgrind (``valgrind --tool=callgrind``), as CodSpeed's CI mode and
iai-callgrind do, and what is recorded is what the operation executed:

- **ASLR off** (``setarch -R``): the same addresses each time, so the
  allocator and everything hashing an ``id`` take the same paths;
- **a fixed hash seed** (``PYTHONHASHSEED=0``): the same ``str`` hashes, so
  the same dict and set layouts;
- **a cleaned environment** (:func:`counting_environment`): only what finds
  Python, its packages and the cell's own variables, so a variable of the
  caller's shell cannot change what is counted (nor how long the
  environment block on the stack is);
- **N and 2N operations, differenced**: the worker (its side is
  :mod:`stratabench.engine.count_worker`) counts a loop of N operations and
  one of 2N in the same process, after the cell's set-up and a warm-up; the
  difference is N operations exactly, so the interpreter's start, the
  imports, the dataset, the set-up and whatever the loop costs once (its
  clock reads, the collection before it) cancel.

Two figures come back per operation: ``instructions`` (callgrind's ``Ir``)
and ``est_cycles``, from its cache simulation, by the formula
:mod:`stratabench.metrics` states with the metric (iai-callgrind's weights).
Counts are exact, so :mod:`stratabench.metrics` gives them a small tolerance
and ``compare`` judges them by it, with no statistics.

What a count cannot see (said under every table of counts, :mod:`stratabench.report.counts`):
time spent waiting (I/O, a sleep, a lock), work done in another process (a
database or cache server), and Go cells, which are separate programs;
instructions are not time either (a cache miss costs a hundred of them).
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from stratabench.engine.operation import CellSpec
from stratabench.errors import UnavailableError

__all__ = ["HASH_SEED", "MARKER_FUNCTION", "OUT_VARIABLE", "counted_worker", "counting_environment",
           "require_valgrind", "uncountable"]

#: The hash seed of every counted interpreter.
HASH_SEED = "0"

#: The variables a counted interpreter keeps from the caller's environment: where programs, Python's own
#: modules and the user's are found, temporary files go, and stratabench keeps its build cache.
_KEPT = ("PATH", "HOME", "TMPDIR", "PYTHONPATH", "VIRTUAL_ENV")

#: The environment variable that tells the worker where callgrind writes its dumps.
OUT_VARIABLE = "STRATABENCH_CALLGRIND_OUT"

#: The C function behind ``sys.getswitchinterval``, which nothing else calls: callgrind dumps its
#: counts before each call, so the worker ends a segment by calling it (a marker).
MARKER_FUNCTION = "_PyEval_GetSwitchInterval"


def require_valgrind() -> list[str]:
    """The command prefix that runs a program under callgrind with ASLR off.

    Raises
    ------
    UnavailableError
        When valgrind or setarch is missing (exit 69), naming the package to install.
    """
    valgrind, setarch = shutil.which("valgrind"), shutil.which("setarch")
    if valgrind is None:
        raise UnavailableError("--count instructions needs valgrind: install it (apt-get install -y valgrind)")
    if setarch is None:
        raise UnavailableError("--count instructions needs setarch to turn ASLR off: install util-linux")
    return [setarch, platform.machine(), "-R", valgrind, "--tool=callgrind", "--cache-sim=yes",
            f"--dump-before={MARKER_FUNCTION}"]


def uncountable(spec: CellSpec) -> str | None:
    """Why a cell cannot be counted, in one line; ``None`` when it can."""
    if spec.language != "python":
        return (f"a {spec.language} cell cannot be counted: callgrind counts this Python's instructions, "
                "and a Go program is another process; time it instead (run without --count)")
    return None


def counting_environment(cell_env: Mapping[str, str], out_file: Path) -> dict[str, str]:
    """The cleaned environment of a counted interpreter: the few variables it needs, a fixed seed, the cell's own."""
    kept = {name: os.environ[name] for name in _KEPT if name in os.environ}
    kept |= {name: value for name, value in os.environ.items() if name.startswith("STRATABENCH_")}
    return {**kept, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": HASH_SEED,
            "PYTHONDONTWRITEBYTECODE": "1", OUT_VARIABLE: str(out_file), **cell_env}


def counted_worker(out_file: Path, log_file: Path, python: str = sys.executable) -> list[str]:
    """The command that runs the counting worker (:mod:`stratabench.engine.count_worker`) under callgrind.

    The worker is ``python`` (``stratabench ab``'s side may be another environment's interpreter).

    Callgrind writes its dumps to ``out_file`` (the worker reads them back)
    and its own messages to ``log_file``. The parent runs it as any worker
    (:func:`stratabench.engine.cell.run_cell_counted`).

    Raises
    ------
    UnavailableError
        When valgrind or setarch is missing (exit 69), naming the package to install.
    """
    return [*require_valgrind(), f"--callgrind-out-file={out_file}", f"--log-file={log_file}",
            python, "-m", "stratabench.engine.count_worker"]
