"""A zygote: fresh worker processes without an interpreter start and its imports each.

Every cell runs in a fresh process, so no cell sees what another imported,
cached or left in a module global. Starting a new interpreter per cell
costs about half a second (the interpreter, then the engine's and the
suite's imports), which is most of a quick cell's time. As in
:mod:`multiprocessing`'s forkserver, a zygote process imports the engine
and the run's suite modules once, then ``fork``\\ s one child per cell: the
child starts with those modules imported and nothing else, runs its one
cell and exits. No cell ever runs in the zygote itself, so every child is
as fresh as the zygote.

This module is the parent's side: it starts and drives zygotes. The zygote
process itself (its loop and the forked child) is the child's side, in
:mod:`stratabench.engine.worker`. The run starts it with ``python -m
stratabench.engine.worker --zygote MODULE...``; it is driven through a pipe, one JSON line each way:

- parent → zygote: ``{"request": {cell, options}, "result": PATH, "log": PATH}``.
  The request travels through the pipe, never a file: store URLs may carry
  passwords.
- zygote → parent: ``{"ready": PID}`` once the modules are imported; for each
  request ``{"child": PID}`` at the fork, then ``{"child": PID, "exit": CODE}``
  (a negative code is the signal that ended it) as soon as the child has said
  it is done (its result and log written), before its exit has freed its
  memory (a few milliseconds, in every visit): that runs beside the parent's
  reading of the result and the zygote's next fork, and the next child waits
  for it before it starts. Before anything else is measured (another
  zygote's child, the parent's own measurements), the parent sends
  ``{"settle": true}``: the zygote waits for its last child to be gone and
  answers ``{"settled": PID}`` (``null`` if there was none). :func:`settle`
  does it for whichever zygote ran last.

The child writes its result record to ``result`` and its diagnostics to
``log``, exactly as a spawned worker does. Its environment is the zygote's:
cells that need their own environment variables (set before anything is
imported) get a zygote of their own (:class:`Zygotes`). The zygote dies with
the run (a parent-death signal) and each child with its zygote. Every zygote
of one :class:`Zygotes` names one directory to its children
(:mod:`stratabench.run_shared`), where set-up every visit of a cell would make
alike is made once for the run.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, ClassVar

from stratabench.errors import StratabenchError
from stratabench.lifeline import popen_tied
from stratabench.run_shared import SHARED_DIR_ENV

__all__ = ["ForkedRun", "Zygote", "ZygoteError", "Zygotes", "settle"]

#: Seconds a zygote may take to import its modules before the run gives up on it.
READY_TIMEOUT_S = 300.0

#: Seconds a closed zygote may take to exit before it is killed.
CLOSE_TIMEOUT_S = 5.0


class ZygoteError(StratabenchError):
    """The zygote process died or stopped answering."""


@dataclass(frozen=True)
class ForkedRun:
    """How one forked worker ended.

    Attributes
    ----------
    pid
        The child's process id (each cell's is its own).
    exit_code
        Its exit status; negative for the signal that ended it.
    timed_out
        The run killed it for running past the cell's timeout.
    """

    pid: int
    exit_code: int
    timed_out: bool = False


class Zygote:
    """One zygote process, with the given environment and modules imported.

    Parameters
    ----------
    env
        The environment of the zygote and so of every worker it forks.
    preload
        Module names to import once; a module that fails to import is left
        out (the cell that needs it will say why).
    python
        The interpreter: this one, or another environment's (``stratabench ab``
        measures two environments, each from a zygote of its own).
    """

    #: The zygote whose last worker has said it is done but may still be exiting (this process measures one
    #: thing at a time: any other zygote's worker, or the parent's own measurement, first :func:`settle`\ s it).
    exiting: ClassVar[Zygote | None] = None

    def __init__(self, env: Mapping[str, str], preload: Iterable[str] = (), python: str = sys.executable) -> None:
        self._process = popen_tied(
            [python, "-m", "stratabench.engine.worker", "--zygote", *preload],
            env=dict(env), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            # Unbuffered: a buffered reader could pull two answers at once, and
            # select() would then wait on the pipe for the one already read.
            bufsize=0,
        )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._to: IO[bytes] = self._process.stdin
        self._from: IO[bytes] = self._process.stdout
        self._pid: int | None = None
        #: The worker running now, if any: an interrupted run kills it on close.
        self._child: int | None = None

    @property
    def pid(self) -> int:
        """The zygote's process id, once it has imported its modules: the first call waits for that.

        Starting does not wait, so a round's zygotes can import side by side (:meth:`Zygotes.start`).
        """
        if self._pid is None:
            self._pid = int(self._answer(READY_TIMEOUT_S, "ready")["ready"])
        return self._pid

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def _answer(self, timeout_s: float | None, what: str) -> dict[str, Any]:
        """The zygote's next line, within ``timeout_s``; ``TimeoutError`` past it.

        The run may close its zygotes from another thread while one waits here
        (an interrupted run ends them as the cell's thread reads): the closed
        pipe is then a ``ZygoteError`` the cell fails with, not a ``ValueError``
        from ``select`` or ``readline`` (it escaped 5 of 20 times under load).
        """
        try:
            if timeout_s is not None:
                ready, _, _ = select.select([self._from], [], [], timeout_s)
                if not ready:
                    raise TimeoutError(what)
            line = self._from.readline()
        except ValueError:
            raise ZygoteError(f"the zygote was closed while waiting for {what}") from None
        if not line:
            code = self._process.wait()
            raise ZygoteError(f"the zygote process exited with code {code} while waiting for {what}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def run(self, request: Mapping[str, Any], result: Path, log: Path, timeout_s: float) -> ForkedRun:
        """Fork a worker for ``request`` and wait for it, killing it past ``timeout_s``.

        Raises
        ------
        ZygoteError
            When the zygote itself died; the cell fails, the next gets a new zygote.
        """
        self.pid  # the zygote's first answer is its ready line
        if Zygote.exiting is not self:
            settle()  # another zygote's last worker must be gone before this one's starts
        line = json.dumps({"request": request, "result": str(result), "log": str(log)})
        try:
            self._to.write(line.encode() + b"\n")
            self._to.flush()
        except OSError:
            raise ZygoteError(f"the zygote process has ended (code {self._process.wait()})") from None
        child = self._child = int(self._answer(60.0, "the fork")["child"])
        timed_out = False
        try:
            ended = self._answer(timeout_s, "the worker")
        except TimeoutError:
            timed_out = True
            self._kill_child()
            ended = self._answer(60.0, "the killed worker")
        self._child = None
        Zygote.exiting = self
        return ForkedRun(child, int(ended["exit"]), timed_out)

    def settle(self) -> None:
        """Wait until the zygote's last worker has exited (the module docstring says why); a dead zygote has none."""
        if Zygote.exiting is self:
            Zygote.exiting = None
        try:
            self._to.write(json.dumps({"settle": True}).encode() + b"\n")
            self._to.flush()
            self._answer(60.0, "the last worker's exit")
        except (OSError, ValueError, ZygoteError, TimeoutError):
            pass  # a zygote that died, or was closed (it waits for its last worker), took its workers with it

    def _kill_child(self) -> None:
        if self._child is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._child, signal.SIGKILL)

    def close(self) -> None:
        """End the zygote: a worker still running (an interrupted run) is killed, stdin closes, the zygote exits
        (after its last worker)."""
        if Zygote.exiting is self:
            Zygote.exiting = None
        self._kill_child()
        with contextlib.suppress(OSError):
            self._to.close()
        if self._answers_end(CLOSE_TIMEOUT_S):
            self._process.wait()  # it has closed its end of the pipe: it is exiting
        else:
            self._process.kill()
            self._process.wait()
        self._from.close()

    def _answers_end(self, timeout_s: float) -> bool:
        """Whether the zygote's answers reach their end within ``timeout_s``, anything left in them read and dropped.

        The end of the pipe is the zygote exiting (its workers closed their copies when forked), seen as soon as
        it happens: ``Popen.wait(timeout)`` polls with sleeps doubling from 0.5 ms, and a zygote that took 10 ms
        to exit was waited for 15.5 ms, twice a round.
        """
        deadline = time.monotonic() + timeout_s
        while (left := deadline - time.monotonic()) > 0:
            if not select.select([self._from], [], [], left)[0]:
                return False
            try:
                if not self._from.read(65536):
                    return True
            except OSError:
                return True
        return False


def settle() -> None:
    """Wait until the last forked worker, of whichever zygote, has exited: call it before measuring in this process."""
    if Zygote.exiting is not None:
        Zygote.exiting.settle()


class Zygotes:
    """The run's zygotes: one per distinct cell environment, started on first use, all ended on close.

    Their workers share one directory (:data:`shared_dir`, named to them by
    :data:`~stratabench.run_shared.SHARED_DIR_ENV`) across rounds: made in
    the run's temporary root, removed on close.

    Parameters
    ----------
    preload
        The modules every zygote imports (the engine's worker is always one).
    python
        The interpreter of every zygote.
    """

    def __init__(self, preload: Iterable[str] = (), python: str = sys.executable) -> None:
        self.preload = tuple(dict.fromkeys(("stratabench.engine.worker", *preload)))
        self.python = python
        self._zygotes: dict[tuple[tuple[str, str], ...], Zygote] = {}
        #: Zygotes started beside a round's own for the round after it (:meth:`start`), keyed alike.
        self._next: dict[tuple[tuple[str, str], ...], Zygote] = {}
        self._round: int | None = None
        self.shared_dir = Path(tempfile.mkdtemp(prefix="stratabench-shared-"))
        #: Where each visit's worker writes its result and log (:meth:`visit_files`), removed on close.
        self.visits_dir = Path(tempfile.mkdtemp(prefix="stratabench-visits-"))
        self._visits = itertools.count()

    def visit_files(self) -> tuple[Path, Path]:
        """A new visit's result and log files, in :attr:`visits_dir`: the caller removes them once read.

        Files of one directory made once, not a directory per visit: a
        directory per visit cost a ``mkdir`` and an ``rmtree`` (its ``rmdir``
        most of it, on this machine's ext4) in every visit.
        """
        number = next(self._visits)
        return self.visits_dir / f"{number}.result.json", self.visits_dir / f"{number}.log"

    def for_round(self, number: int) -> Zygotes:
        """These zygotes for round ``number``: the zygotes of an earlier round are ended first, so each round forks
        its workers from new ones.

        A zygote's address-space layout (ASLR) and hash seed are drawn when it
        starts, and every worker it forks inherits them. Measured on this
        project's machine, two zygotes of one environment ran the same loop 3%
        to 9% apart in CPU time, the same in every round; with one zygote for
        the whole run, that offset was in every round of a cell, where the
        interval (the spread between rounds) could not see it, and two runs
        of identical code differed by it. New zygotes every round make the
        layout one more thing that varies between rounds, so a cell's interval
        (and a paired ratio's) includes it, as Stabilizer (Curtsinger &
        Berger) re-randomizes layout for the same reason. The cost: one zygote
        start per environment and round, half of them made beside the other
        half (:meth:`start`). The zygotes started for this round by the round
        before are this round's; each serves one round only.
        """
        if number != self._round:
            self._end_zygotes()
            self._zygotes, self._next = self._next, {}
            self._round = number
        return self

    def start(self, envs: Iterable[Mapping[str, str]]) -> None:
        """Start the zygotes of these environments together and wait until every one is ready.

        Each is an interpreter start and the run's imports (0.85 s here); a
        round that needs two environments (the entities cells of pure-Python
        protobuf) paid them one after the other, and now, with a core free,
        in the time of one. All are ready before this returns, so no zygote
        is still importing beside a measured cell.

        A round that has to start a zygote also starts, beside it, one of each
        of its environments for the next round, which then waits for none
        (unless it needs another environment): a round's start waits the
        time of one zygote (about 1 s here) every other round instead of
        every round. Of a default run's 15 to 20 rounds, those after the
        sixth (or ninth) need one environment and leave a core free.
        """
        wanted = list({self._key(env): env for env in envs}.values())
        starting = any((zygote := self._zygotes.get(self._key(env))) is None or not zygote.alive for env in wanted)
        zygotes = [self._started(env) for env in wanted]
        if starting:
            for env in wanted:
                if self._key(env) not in self._next:
                    zygotes.append(self._next.setdefault(self._key(env), self._new(env)))
        for zygote in zygotes:
            # One that died starting is started again for its first cell, which fails with the reason if it dies again.
            with contextlib.suppress(ZygoteError):
                zygote.pid  # waits for its ready line

    def for_env(self, env: Mapping[str, str]) -> Zygote:
        """The zygote whose environment is this process's plus ``env`` (started, or restarted if it died)."""
        zygote = self._started(env)
        zygote.pid  # waits until it has imported its modules
        return zygote

    def _started(self, env: Mapping[str, str]) -> Zygote:
        """The zygote of ``env``, started now if there is none (or it died), without waiting for it to be ready."""
        key = self._key(env)
        zygote = self._zygotes.get(key)
        if zygote is None or not zygote.alive:
            if zygote is not None:
                zygote.close()
            zygote = self._zygotes[key] = self._new(env)
        return zygote

    @staticmethod
    def _key(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
        return tuple(sorted(env.items()))

    def _new(self, env: Mapping[str, str]) -> Zygote:
        """A new zygote of ``env``, started now, not waited for."""
        return Zygote({**os.environ, **env, SHARED_DIR_ENV: str(self.shared_dir)}, self.preload, self.python)

    def _end_zygotes(self) -> None:
        for zygote in self._zygotes.values():
            zygote.close()
        self._zygotes.clear()

    def close(self) -> None:
        """End every zygote (the next round's too) and remove the workers' shared directory and their visits'."""
        self._end_zygotes()
        self._zygotes, self._next = self._next, {}
        self._end_zygotes()
        shutil.rmtree(self.shared_dir, ignore_errors=True)
        shutil.rmtree(self.visits_dir, ignore_errors=True)

    def __enter__(self) -> Zygotes:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
