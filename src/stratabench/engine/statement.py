"""The one compiler of a Python statement to time, for ``stratabench timeit`` and ``stratabench.timeit``.

A statement is timed as :mod:`timeit` and ``pyperf timeit`` time it: the
statement is inlined in the body of the timed loop, and the setup runs in
the same function before the clock starts, so names it binds are fast
locals and the statement pays no call of its own.

The loop is pyperf's, instruction for instruction, and like pyperf's it is
compiled afresh for every timed run (pyperf's ``make_inner``). A loop this
small is as fast as where its code lands in memory lets it be: on this
project's machine one compile of ``pass`` ran at 3.5 ns a loop and the next
at 4.0 ns, the same in every call, and a function shaped otherwise (its
iterator made inside, its clocks as defaults) drew from another mix of
placements and timed 4-10% off pyperf's. Compiled each time, and shaped as
pyperf's (the iterator and clocks passed in), the two medians over 40 runs
in one process agreed within 0.5%. The loop is the same as pyperf's to the
instruction: under cachegrind each runs 65 instructions a loop in the eval
loop and 8 in ``itertools.repeat``, with no simulated cache miss and no
simulated mispredicted branch a loop. Placement is not the only thing that
moves it: one compile of pyperf's loop, timed again and again in one
process, ran at 6.8 ns for a second, then 7.1, then 4.4 (other work was
running on the machine's second core), so a median of ``pass`` beside
pyperf's holds only over many pairs taken close in time
(``benchmarks/rounds_targets.py``). Nor is it the process: timed in turn
under the lock (60 pairs of 0.07 s slices in one process, load 1.2), one
compile held throughout and a fresh compile each slice moved together
between the same speeds (4.4, 4.9, 5.2, 5.7 ns; correlation 0.68), and
the worker's environment moved nothing: ``stratabench timeit pass`` under
``env -i`` with only PATH and HOME beside the full environment, paired over
8 alternations, 1.001 (0.914–1.102); pyperf with ``--copy-env`` beside its
stripped environment 0.994 (0.853–1.059), load 1.1–1.9.

Both sources may have several lines; each is dedented, then indented into
the loop's function line by line, so a multi-line setup or a compound
statement compiles as written. Repeated ``-s`` options and several statement
arguments are joined with newlines (:func:`join_lines`), as ``python -m
timeit`` joins them.

The user's code is the user's: a syntax error, or an exception raised on one
of its lines, becomes a one-line :class:`~stratabench.errors.StatementError`
naming the part (statement or setup), the line and its text. An exception
that no line of the user's raised is left as it is, for the engine to report
as its own.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import textwrap
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from types import CodeType
from typing import Any, NoReturn

from stratabench.engine.clock import SYSTEM_CLOCK, Clock, LoopTimer
from stratabench.errors import StatementError

__all__ = ["CompiledStatement", "compile_statement", "join_lines", "one_line", "statement_timer"]

#: The file name of the generated code: frames with it are the user's lines or the loop's.
FILENAME = "<stratabench-timeit>"

#: The timed loop; ``{setup}`` and ``{stmt}`` are replaced by indented lines.
_HEAD = "def timed(_it, _wall, _cpu):"
_BEFORE_LOOP = ("    _cpu0 = _cpu()", "    _wall0 = _wall()", "    for _ in _it:")
_AFTER_LOOP = ("    _wall1 = _wall()", "    _cpu1 = _cpu()", "    return _wall1 - _wall0, _cpu1 - _cpu0")


def join_lines(parts: Iterable[str]) -> str:
    """Several ``-s`` options or statement arguments as one source, as ``python -m timeit`` joins them.

    Returns ``pass`` for none.
    """
    return "\n".join(parts) or "pass"


def one_line(source: str) -> str:
    """A statement shown on one line: its non-blank lines joined with ``; ``."""
    return "; ".join(line.strip() for line in source.splitlines() if line.strip()) or "pass"


@dataclass(frozen=True)
class _Line:
    """Where one line of the generated code came from."""

    part: str  # "statement" or "setup"
    number: int  # 1-based, within its part
    text: str


@dataclass(frozen=True)
class CompiledStatement:
    """The timed loop of one statement and its setup, compiled.

    Attributes
    ----------
    code
        The module code that defines ``timed(iterator, wall, cpu)``.
    origins
        For each generated line number, the user's line it holds, if any.
    source
        The generated source, compiled again for every timed run (see the module's docstring).
    """

    code: CodeType
    origins: dict[int, _Line]
    source: str

    def loop_timer(self, namespace: dict[str, Any], clock: Clock = SYSTEM_CLOCK, *, fresh: bool = True) -> LoopTimer:
        """The timed loop, run in a copy of ``namespace`` (the statement's globals).

        ``fresh`` compiles the loop again for every run (see the module's
        docstring); ``False`` runs one compile throughout, for a count of
        instructions, which the compiler's own would otherwise swamp.

        It returns the loop's total (wall_ns, cpu_ns), as every
        :data:`~stratabench.engine.clock.LoopTimer` does; an exception
        raised on one of the user's lines comes out as a
        :class:`~stratabench.errors.StatementError`.
        """
        scope = dict(namespace)
        source, users_error = self.source, self.users_error
        exec(self.code, scope)

        def timed(loops: int) -> tuple[int, int]:
            if fresh:  # a new code object each run, as pyperf's: one placement in memory is one draw of the speed
                exec(compile(source, FILENAME, "exec"), scope)
            loop = scope["timed"]
            # The try costs nothing inside the loop: it sits around it.
            try:
                with _exits_refused():
                    result: tuple[int, int] = loop(itertools.repeat(None, loops), clock.wall_ns, clock.cpu_ns)
                    return result
            except _ExitCalled as called:
                raise StatementError(f"the statement called os._exit({called.code}), which ends the process at once; "
                                     "time something that returns") from None
            except SystemExit as error:
                raise StatementError(f"the statement raised SystemExit({error.code!r}) (sys.exit or exit), which "
                                     "would end the measurement; time something that returns") from None
            except Exception as error:
                raised = users_error(error)
                if raised is None:
                    raise
                raise raised from error

        return timed

    def users_error(self, error: BaseException) -> StatementError | None:
        """The one-line error for ``error`` if one of the user's lines raised it, else ``None``."""
        line = None
        for frame in traceback.extract_tb(error.__traceback__):
            if frame.filename == FILENAME and frame.lineno in self.origins:
                line = self.origins[frame.lineno]  # the innermost of the user's lines wins
        if line is None:
            return None
        message = " ".join(str(error).split())
        return StatementError(
            f"{line.part} line {line.number} {line.text.strip()!r} raised {type(error).__name__}"
            + (f": {message}" if message else "")
        )


class _ExitCalled(BaseException):
    """``os._exit`` called by the user's statement; a BaseException so ``except Exception`` in it cannot hide it."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


@contextlib.contextmanager
def _exits_refused() -> Iterator[None]:
    """``os._exit`` raises instead of ending the process while the user's code runs.

    ``os._exit`` skips every handler, so without this a statement calling it
    would end ``timeit --in-process`` silently with the statement's status.
    """
    real = os._exit

    def refuse(status: int) -> NoReturn:
        raise _ExitCalled(status)

    os._exit = refuse
    try:
        yield
    finally:
        os._exit = real


def _lines(source: str) -> list[str]:
    return textwrap.dedent(source).strip("\n").splitlines() or ["pass"]


def _check(part: str, lines: list[str]) -> None:
    """Compile one part alone, so that a syntax error names its own part and line, as :mod:`timeit` does."""
    source = "\n".join(lines)
    try:
        compile(source, FILENAME, "exec")
    except SyntaxError as error:
        what = repr(source)
        if len(lines) > 1 and error.lineno is not None and 1 <= error.lineno <= len(lines):
            what = f"line {error.lineno} {lines[error.lineno - 1].strip()!r}"
        raise StatementError(f"{part} {what} is not valid Python: {error.msg}") from None


def compile_statement(stmt: str = "pass", setup: str = "pass") -> CompiledStatement:
    """Compile ``stmt`` inlined in a timed loop after ``setup``.

    Raises
    ------
    StatementError
        When either is not valid Python, naming the part and its line.
    """
    setup_lines, stmt_lines = _lines(setup), _lines(stmt)
    _check("setup", setup_lines)
    _check("statement", stmt_lines)
    generated = [_HEAD]
    origins: dict[int, _Line] = {}

    def add(part: str, lines: list[str], indent: str) -> None:
        for number, text in enumerate(lines, 1):
            generated.append(indent + text)
            origins[len(generated)] = _Line(part, number, text)

    add("setup", setup_lines, " " * 4)
    generated.extend(_BEFORE_LOOP)
    add("statement", stmt_lines, " " * 8)
    generated.extend(_AFTER_LOOP)
    source = "\n".join(generated) + "\n"
    try:
        code = compile(source, FILENAME, "exec")
    except SyntaxError as error:
        # Valid alone, not inside the loop: a `return`, or a statement that
        # closes the loop's indentation.
        line = origins.get(error.lineno or 0)
        where = f"{line.part} line {line.number} {line.text.strip()!r}" if line else "the statement"
        raise StatementError(f"{where} cannot run inside the timed loop: {error.msg}") from None
    return CompiledStatement(code, origins, source)


def statement_timer(stmt: str, setup: str, namespace: dict[str, Any], clock: Clock = SYSTEM_CLOCK, *,
                    fresh: bool = True) -> LoopTimer:
    """A timed loop with ``stmt`` inlined in its body: :func:`compile_statement`, then its loop."""
    return compile_statement(stmt, setup).loop_timer(namespace, clock, fresh=fresh)
