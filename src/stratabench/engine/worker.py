"""The engine's child side: everything that runs inside a worker process.

pyperf draws this line between ``_manager.py`` (the parent) and
``_worker.py`` (the child); here the parent's side is
:mod:`stratabench.engine.cell` (the runners) and
:mod:`stratabench.engine.zygote` (the zygote's client), and this module is
the other end of their pipes:

- ``python -m stratabench.engine.worker REQUEST RESULT``: a spawned worker
  (``--spawn``) measures one cell and writes its result record
  (``-``: the request on stdin);
- ``python -m stratabench.engine.worker --zygote MODULE...``: the zygote
  imports the modules once, then forks one worker per request line (the
  protocol is described in :mod:`stratabench.engine.zygote`).

Both kinds of worker end in :func:`serve_request`.
"""

from __future__ import annotations

import atexit
import contextlib
import faulthandler
import importlib
import json
import os
import signal
import sys
import traceback
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from stratabench.engine.cell import Measure, run_cell_in_process
from stratabench.engine.measure import freeze_for_children, measure_operation
from stratabench.engine.operation import CellSpec
from stratabench.engine.sampling import RoundPlan
from stratabench.lifeline import parent_death_signal
from stratabench.options import RunOptions
from stratabench.results.format import cell_to_json

__all__ = ["main", "serve_request", "worker_main", "zygote_main"]


def worker_main(argv: list[str], measure: Measure = measure_operation) -> int:
    """Entry point of the worker process: ``REQUEST RESULT``, ``-`` reading the request from stdin.

    ``measure`` is the engine's timing, or the count of a worker started under callgrind
    (:mod:`stratabench.engine.count_worker`).
    """
    request_path, result_path = argv
    return serve_request(json.loads(sys.stdin.read() if request_path == "-" else Path(request_path).read_text()),
                         result_path, measure)


def serve_request(request: dict[str, Any], result_path: str, measure: Measure = measure_operation) -> int:
    """In a worker (spawned or forked): run the requested cell, write its result record."""
    # A crash in a library (a signal such as SIGSEGV, with no Python exception) then writes the stack of every
    # thread to the worker's stderr, which the run keeps for the cell's failure.
    faulthandler.enable()
    spec = CellSpec.from_json(request["cell"])
    options = RunOptions.from_json(request["options"])
    plan = None if request.get("round") is None else RoundPlan.from_json(request["round"])
    result = run_cell_in_process(spec, options, measure=measure, plan=plan)
    Path(result_path).write_text(json.dumps(cell_to_json(result)))
    return 0


# -- the zygote ------------------------------------------------------------------------


def _preload(modules: Iterable[str]) -> None:
    for name in modules:
        try:
            module = importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a module that cannot load here fails only the cells needing it
            traceback.print_exc()
            continue
        # A cell factory may name the heavy libraries its cells import: a
        # ``preload`` tuple, or a class method returning one; and a ``warm``
        # class method that builds, once, what its cells would each build alike.
        for value in vars(module).values():
            if not isinstance(value, type):
                continue
            with contextlib.suppress(Exception):  # a library missing here fails only the cells that need it
                extras = getattr(value, "preload", ())
                for extra in extras() if callable(extras) else extras:
                    with contextlib.suppress(Exception):
                        importlib.import_module(extra)
            # Only a class the module defines: not the base class or a sibling it imports, warmed where defined.
            warm = getattr(value, "warm", None) if value.__module__ == module.__name__ else None
            if callable(warm) and getattr(warm, "__self__", None) is value:  # a class method, not an instance's
                try:
                    warm()
                except Exception:  # noqa: BLE001 - the cells then build it themselves, and fail there if they must
                    traceback.print_exc()


def _child(message: dict[str, Any], arm: Any, channels: tuple[int, ...], previous_gone: int | None) -> int:
    """In the forked worker: cut the zygote's pipes, wait until the previous worker has exited, point output at the
    log, run the cell."""
    if arm is not None:
        arm()  # the worker ends with its zygote, as the zygote ends with the run
    for fd in channels:
        os.close(fd)
    if previous_gone is not None:
        # The previous worker of this zygote had finished its cell but was still exiting when this one was
        # forked (zygote_main says why): nothing of this cell runs beside it. End of file means the zygote died.
        os.read(previous_gone, 1)
        os.close(previous_gone)
    log = os.open(message["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.close(null)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return serve_request(message["request"], message["result"])


def zygote_main(preload: list[str]) -> int:
    """Entry point of the zygote: import ``preload``, then fork one worker per request line."""
    # The run decides what an interrupt stops; the zygote only forks.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    requests = os.fdopen(os.dup(0), "rb")
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a module printing on import must not corrupt the answers
    _preload(preload)
    # Move everything the imports made to a permanent generation (as the gc docs
    # advise for a fork server): a child's collections, and the memory pass's
    # gc.collect() calls, then traverse only the cell's own objects instead of
    # every imported library's (about 50 ms a full collection here), and the
    # children share those pages instead of dirtying them.
    freeze_for_children()

    def answer(data: dict[str, Any]) -> None:
        answers.write(json.dumps(data).encode() + b"\n")
        answers.flush()

    answer({"ready": os.getpid()})
    arm = parent_death_signal()
    # The last worker, once it has said it is done: its exit (the kernel freeing its copy of the zygote's page
    # tables and the pages it wrote, milliseconds in every visit) runs while the run reads its result and this
    # process forks the next worker, which waits for it to be gone before it starts (_child).
    exiting: int | None = None
    for line in requests:
        message = json.loads(line)
        if message.get("settle"):
            # The run measures something else next (another zygote's worker, its reference workload): the last
            # worker must be gone first.
            if exiting is not None:
                os.waitpid(exiting, 0)
            answer({"settled": exiting})
            exiting = None
            continue
        previous_gone, gone = os.pipe() if exiting is not None else (None, None)
        done_reading, done = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _child(message, arm, tuple(fd for fd in (requests.fileno(), answers.fileno(), done_reading, gone)
                                                  if fd is not None), previous_gone)
            except BaseException:  # noqa: BLE001 - the worker must exit here, never return into the zygote's loop
                traceback.print_exc()
            finally:
                # A fresh interpreter would run its exit handlers; the zygote's
                # loop must never resume in the child.
                with contextlib.suppress(BaseException):
                    atexit._run_exitfuncs()
                    sys.stdout.flush()
                    sys.stderr.flush()
                with contextlib.suppress(BaseException):
                    os.write(done, bytes([code & 0xFF]))  # done: its result and log are written
                os._exit(code)
        os.close(done)
        answer({"child": pid})
        if exiting is not None and previous_gone is not None and gone is not None:
            os.close(previous_gone)
            os.waitpid(exiting, 0)
            os.write(gone, b"\0")
            os.close(gone)
        # Its code, sent before it exits; nothing (end of file) if it ended otherwise (a signal, os._exit in a cell).
        said = os.read(done_reading, 1)
        os.close(done_reading)
        if said:
            exiting, code = pid, said[0]
        else:
            _, status = os.waitpid(pid, 0)
            exiting, code = None, os.waitstatus_to_exitcode(status)
        answer({"child": pid, "exit": code})
    if exiting is not None:
        os.waitpid(exiting, 0)
    return 0


def main(argv: list[str]) -> int:
    """``--zygote MODULE...`` runs the zygote; ``REQUEST RESULT`` one spawned worker."""
    if argv[:1] == ["--zygote"]:
        code = zygote_main(argv[1:])
        # The zygote ends without finalizing the interpreter: tearing down every module it imported took 32 ms a
        # zygote here, and the run waits for its zygotes to be gone before a round's first worker (two a round
        # while the pure-Python protobuf cells run). Nothing of it needs finalizing: its workers are gone, its
        # answers flushed, and what it wrote lives in the run's directories, which the run removes.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return worker_main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
