"""Runs each fuzz input as ``stratabench`` in a process of its own, forked from this warmed interpreter.

Issue 27 asks for the fuzz to go through a real process: its own pid, its
own file descriptors 0-2, its exit status as the shell sees it, a crash or
a hang that cannot hide in the test process. Starting ``python -m
stratabench`` per input costs about a second of imports, too much for the
1,000 inputs a CI run takes; so this server imports the command line once,
warms it with a few harmless commands (their lazy imports), and forks one
child per input, as the engine's zygote forks workers.

Protocol, one JSON line each way: the request ``{"id", "argv", "out",
"err", "cwd", "timeout"}``; the child runs ``main(argv)`` with stdout and
stderr on the files ``out`` and ``err`` and stdin on ``/dev/null``; the
answer ``{"id", "status", "signal", "hung"}``. A child still running after
``timeout`` seconds is killed (with its process group) and answered as hung.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
import traceback

from stratabench.cli.main import main

#: The exit status of a child whose command raised: never one of the documented ones.
UNCAUGHT = 125


def _warm() -> None:
    """Import what the commands import lazily, so each forked child does not import it again."""
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        for argv in (["list"], ["run", "timeit", "--dry-run"], ["run", "matrix", "--dry-run"],
                     ["report", "--help"], ["compare", "--help"], ["load", "--help"], ["clean", "--help"]):
            with contextlib.suppress(BaseException):
                main(argv)


def _child(request: dict[str, object]) -> None:
    """In the forked child: run the command on its own descriptors, and end with its status."""
    code = UNCAUGHT
    try:
        os.setpgid(0, 0)  # a hung command is killed with what it started
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(str(request["out"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        err = os.open(str(request["err"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        for source, target in ((null, 0), (out, 1), (err, 2)):
            os.dup2(source, target)
        os.chdir(str(request["cwd"]))
        signal.signal(signal.SIGINT, signal.default_int_handler)
        argv = request["argv"]
        assert isinstance(argv, list)
        code = main([str(argument) for argument in argv])
    except SystemExit as exit_:  # --help ends this way
        code = exit_.code if isinstance(exit_.code, int) else 0
    except BaseException:  # noqa: BLE001 -- the traceback is what the fuzz looks for
        traceback.print_exc()
    finally:  # never back into the server's loop
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code if isinstance(code, int) and 0 <= code < 256 else UNCAUGHT)


def _wait(pid: int, timeout: float) -> tuple[int | None, int | None, bool]:
    """The child's exit status or signal, or ``hung`` after ``timeout`` seconds (then it is killed)."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            if os.WIFSIGNALED(status):
                return None, os.WTERMSIG(status), False
            return os.WEXITSTATUS(status), None, False
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None, signal.SIGKILL, True
        time.sleep(0.005)


def serve() -> None:
    _warm()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            _child(request)
        status, killed_by, hung = _wait(pid, float(request["timeout"]))
        sys.stdout.write(json.dumps({"id": request["id"], "status": status, "signal": killed_by, "hung": hung}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
