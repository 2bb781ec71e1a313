"""Running one cell: in this process, or in a fresh worker process (the parent's side).

Parent and worker talk through a narrow channel, as in pyperf: the parent
starts ``python -m stratabench.engine.worker - RESULT`` and writes the cell
spec and run options to its stdin (a pipe, not a file, because store URLs
may carry passwords); the worker writes one result record to the result
file. Anything else the worker prints is
diagnostics, shown only when the worker dies without a result. The worker's
side of the pipe is :mod:`stratabench.engine.worker`.

During a run the worker is not a new interpreter but a child forked from a
zygote that imported the engine and the suites once
(:mod:`stratabench.engine.zygote`, its client): the same fresh process per cell, the
same request and result, without paying the interpreter's start each time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from stratabench.engine.clock import SYSTEM_CLOCK, Clock
from stratabench.engine.counting import counted_worker, counting_environment, uncountable
from stratabench.engine.measure import Measurement, measure_operation
from stratabench.engine.operation import CellSpec, Operation, builder_of
from stratabench.engine.sampling import RoundPlan
from stratabench.engine.zygote import Zygotes, ZygoteError
from stratabench.errors import StratabenchError, UnavailableError, UncountableError, ValueTooLargeError
from stratabench.lifeline import parent_death_signal
from stratabench.options import EngineOptions, RunOptions
from stratabench.results.format import cell_from_json
from stratabench.results.records import CellResult, Status

__all__ = ["run_cell", "run_cell_counted", "run_cell_forked", "run_cell_in_process", "run_cell_in_worker", "status_of"]


def status_of(error: StratabenchError) -> Status:
    """The cell status an error stands for."""
    if isinstance(error, (ValueTooLargeError, UncountableError)):
        return "unsupported"
    if isinstance(error, UnavailableError):
        return "unavailable"
    return "failed"


def _internal_error(error: BaseException) -> str:
    # A bug in a suite or plugin: keep the result one line but say where it
    # happened, so the report points at the code to fix.
    frame = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    message = " ".join(str(error).split()) or "no message"
    return f"internal error {type(error).__name__}{where}: {message}"


#: Measures a prepared operation: the engine's timing by default, a count under callgrind when counting.
Measure = Callable[[Operation, EngineOptions, Clock], Measurement]


def run_cell_in_process(spec: CellSpec, options: RunOptions, clock: Clock = SYSTEM_CLOCK,
                        measure: Measure = measure_operation, plan: RoundPlan | None = None) -> CellResult:
    """Prepare, measure and verify one Python cell in this process (one round of it, with ``plan``).

    Never raises for a cell's own failure: errors become a result with a
    status and a one-line reason, so one bad cell never stops a run.
    """
    started = time.perf_counter()

    def failed(status: Status, message: str) -> CellResult:
        return CellResult.failure(spec, status, message, time.perf_counter() - started)

    try:
        builder = builder_of(spec, options)
    except StratabenchError as error:
        return failed(status_of(error), error.message)
    with tempfile.TemporaryDirectory(prefix="stratabench-cell-") as workdir:
        try:
            operation = builder.prepare(spec, Path(workdir))
        except StratabenchError as error:
            return failed(status_of(error), error.message)
        except Exception as error:  # noqa: BLE001 - any plugin bug fails only its cell
            traceback.print_exc()
            return failed("failed", _internal_error(error))
        try:
            # A round of a run is the engine's timing, at the round's loops and samples.
            measurement = (measure(operation, options.engine, clock) if plan is None
                           else measure_operation(operation, options.engine, clock, plan))
        except StratabenchError as error:
            return failed(status_of(error), error.message)
        except Exception as error:  # noqa: BLE001
            traceback.print_exc()
            return failed("failed", _internal_error(error))
        finally:
            if operation.close is not None:
                try:
                    operation.close()
                except Exception:  # noqa: BLE001 - cleanup trouble must not hide the result
                    traceback.print_exc()
    return measurement.result(spec, notes=operation.notes, duration_s=time.perf_counter() - started)


def run_cell_in_worker(spec: CellSpec, options: RunOptions, *, command: Sequence[str] | None = None,
                       env: Mapping[str, str] | None = None, plan: RoundPlan | None = None) -> CellResult:
    """Run one cell in a fresh Python process and read back its result.

    ``command`` starts a worker other than the default (``python -m
    stratabench.engine.worker``), with ``env`` as its whole environment:
    counting runs its worker under callgrind (:mod:`stratabench.engine.counting`).
    The worker is given ``- RESULT`` and answers the same way.
    """
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="stratabench-worker-") as tmp:
        result_path = Path(tmp) / "result.json"
        # The request goes through a pipe, never a file: its store URLs may carry passwords.
        request = json.dumps(_request(spec, options, plan))
        try:
            process = subprocess.run(
                [*(command or (sys.executable, "-m", "stratabench.engine.worker")), "-", str(result_path)],
                env={**os.environ, **spec.env} if env is None else dict(env),
                input=request,
                preexec_fn=parent_death_signal(),  # noqa: PLW1509 -- a worker must not outlive a killed run
                capture_output=True,
                text=True,
                timeout=options.engine.cell_timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return _timed_out(spec, options, started)
        return _worker_result(spec, result_path, process.returncode, process.stderr, started)


def _request(spec: CellSpec, options: RunOptions, plan: RoundPlan | None) -> dict[str, Any]:
    """What a worker is asked: the cell, the run's options and, in a run, its round."""
    return {"cell": spec.to_json(), "options": options.to_json(), "round": None if plan is None else plan.to_json()}


def _timed_out(spec: CellSpec, options: RunOptions, started: float) -> CellResult:
    return CellResult.failure(
        spec, "failed", f"timed out after {options.engine.cell_timeout_s:g} s; raise --cell-timeout or use a smaller --size",
        time.perf_counter() - started,
    )


def _worker_result(spec: CellSpec, result_path: Path, exit_code: int, diagnostics: str, started: float) -> CellResult:
    """The worker's result record, or a failure quoting the last line of its diagnostics."""
    if result_path.exists():
        return cell_from_json(json.loads(result_path.read_text()))
    return CellResult.failure(
        spec, "failed", f"worker process exited with code {exit_code} and no result: {_last_words(diagnostics)}",
        time.perf_counter() - started,
    )


#: Frames of a crashed thread's stack that a failure quotes, innermost first.
CRASH_FRAMES = 2


def _last_words(diagnostics: str) -> str:
    """Why a worker died: a fatal error's line and its crashed thread's innermost frames, else the last line.

    faulthandler ends its report with the other threads and the extension
    modules loaded, so the last line of a crash says nothing of where.
    """
    lines = [line.strip() for line in diagnostics.splitlines() if line.strip()]
    fatal = next((number for number, line in enumerate(lines) if line.startswith("Fatal Python error:")), None)
    if fatal is None:
        return lines[-1] if lines else "no output"
    crashed = next((number for number in range(fatal, len(lines)) if lines[number].startswith("Current thread")),
                   fatal)
    frames: list[str] = []
    for line in lines[crashed + 1:]:
        if not line.startswith("File ") or len(frames) == CRASH_FRAMES:
            break
        frames.append(line)
    return lines[fatal] + (f" at {' < '.join(frames)}" if frames else "")


def run_cell_forked(spec: CellSpec, options: RunOptions, zygotes: Zygotes, plan: RoundPlan | None = None) -> CellResult:
    """Run one cell in a fresh process forked from the zygote of its environment, and read back its result."""
    started = time.perf_counter()
    result_path, log = zygotes.visit_files()
    try:
        request = _request(spec, options, plan)
        try:
            forked = zygotes.for_env(spec.env).run(request, result_path, log, options.engine.cell_timeout_s)
        except ZygoteError as error:
            return CellResult.failure(spec, "failed", error.message, time.perf_counter() - started)
        if forked.timed_out:
            return _timed_out(spec, options, started)
        diagnostics = log.read_text(errors="replace") if log.exists() else ""
        return _worker_result(spec, result_path, forked.exit_code, diagnostics, started)
    finally:
        result_path.unlink(missing_ok=True)
        log.unlink(missing_ok=True)


def run_cell_counted(spec: CellSpec, options: RunOptions, python: str = sys.executable) -> CellResult:
    """Count one cell's instructions per operation in a fresh ``python`` under callgrind (:mod:`.counting`).

    A cell that cannot be counted is returned ``unsupported`` with the
    reason; a missing valgrind raises :class:`UnavailableError`.
    """
    refusal = uncountable(spec)
    if refusal is not None:
        return CellResult.failure(spec, "unsupported", refusal)
    with tempfile.TemporaryDirectory(prefix="stratabench-count-") as tmp:
        out_file = Path(tmp) / "callgrind.out"
        return run_cell_in_worker(spec, options, command=counted_worker(out_file, Path(tmp) / "valgrind.log", python),
                                  env=counting_environment(spec.env, out_file))


def run_cell(spec: CellSpec, options: RunOptions, zygotes: Zygotes | None = None,
             plan: RoundPlan | None = None) -> CellResult:
    """Run one cell (one round of it, with ``plan``) the way the options say: a fresh worker process by default,
    forked from ``zygotes`` if given.

    With ``--count instructions`` the cell is counted under callgrind instead (always a fresh interpreter).
    A worker, forked or started, or a count runs the zygotes' interpreter (``stratabench ab``'s side may be
    another environment's).
    """
    python = zygotes.python if zygotes is not None else sys.executable
    if options.engine.count is not None:
        return run_cell_counted(spec, options, python)
    if options.engine.isolate:
        if zygotes is not None and options.engine.fork:
            return run_cell_forked(spec, options, zygotes, plan)
        return run_cell_in_worker(spec, options, command=(python, "-m", "stratabench.engine.worker"), plan=plan)
    if spec.env:
        return CellResult.failure(
            spec, "unavailable", f"needs its own process (environment {', '.join(spec.env)}); run without --in-process"
        )
    return run_cell_in_process(spec, options, plan=plan)
