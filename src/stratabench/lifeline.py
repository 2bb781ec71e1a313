"""Child processes that end with stratabench, even when it is killed with SIGKILL.

A run starts worker processes and private servers. Ctrl-C and SIGTERM stop
them in ``finally`` blocks, but ``kill -9`` runs no code at all, and
servers sit in sessions of their own (so that a Ctrl-C in the terminal does
not reach them). On Linux the kernel can send a child a signal when its
parent dies: ``prctl(PR_SET_PDEATHSIG)``, armed in the child between
``fork`` and ``exec`` by :func:`parent_death_signal`. Elsewhere it does
nothing; those children are stopped by the ``finally`` blocks alone.

The kernel's "parent" is the *thread* that forked the child, not the
process: a child started from a pool thread would be killed as soon as that
thread ends. :func:`popen_tied` therefore starts children on one thread
that lives as long as the process.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["parent_death_signal", "popen_tied"]

_PR_SET_PDEATHSIG = 1


def _load_prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


# Looked up once here: the child between fork and exec should do as little as possible.
_PRCTL = _load_prctl()
_SPAWNER: ThreadPoolExecutor | None = None
_SPAWNER_LOCK = threading.Lock()


def parent_death_signal(sig: int = int(signal.SIGKILL)) -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child receive ``sig`` when its parent ends.

    Returns ``None`` where the platform has no such signal, so the result
    can be passed to ``subprocess`` as is. When the parent died before the
    signal was armed, the child sends it to itself at once.
    """
    if _PRCTL is None:
        return None
    parent = os.getpid()
    prctl = _PRCTL

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), sig)

    return arm


def popen_tied(args: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(args, **kwargs)`` for a child killed (SIGKILL) when this process ends.

    The child is forked by a thread that lives until the interpreter exits,
    so it does not die with a short-lived pool thread that asked for it.
    """
    global _SPAWNER
    with _SPAWNER_LOCK:
        if _SPAWNER is None:
            _SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stratabench-spawner")
        spawner = _SPAWNER
    preexec = parent_death_signal()

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(list(args), preexec_fn=preexec, **kwargs)  # noqa: PLW1509 -- see parent_death_signal

    future = spawner.submit(start)
    try:
        return future.result()
    except BaseException:
        # Interrupted while the spawner forks (Ctrl-C, SIGTERM): the child
        # may start anyway, and nobody would hold it to stop it.
        if not future.cancel() and future.exception() is None:
            orphan = future.result()
            orphan.kill()
            orphan.wait()
        raise
