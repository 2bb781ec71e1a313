"""SIGTERM and SIGHUP stop a command the way Ctrl-C does.

Python turns SIGINT into :class:`KeyboardInterrupt`, so ``finally`` blocks
stop workers and private servers and the results file keeps every finished
cell. SIGTERM (``kill``, systemd, a CI timeout) and SIGHUP (a closed
terminal) would end the process on the spot instead, leaving the servers
running. :func:`stop_signals_interrupt` makes them raise
:class:`Terminated`, a ``KeyboardInterrupt``, so every path that handles
Ctrl-C handles them too.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

__all__ = ["STOP_SIGNALS", "Terminated", "interrupt_description", "interrupted_exit_code", "stop_signals_interrupt"]

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Terminated(KeyboardInterrupt):
    """A stop signal other than SIGINT arrived."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def interrupted_exit_code(interrupt: KeyboardInterrupt) -> int:
    """128 + the signal number, as a shell reports it: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP."""
    return 128 + (interrupt.signum if isinstance(interrupt, Terminated) else int(signal.SIGINT))


def interrupt_description(interrupt: KeyboardInterrupt) -> str:
    """``interrupted`` for Ctrl-C, ``terminated (SIGTERM)`` for the others."""
    return f"terminated ({interrupt.args[0]})" if isinstance(interrupt, Terminated) else "interrupted"


@contextlib.contextmanager
def stop_signals_interrupt() -> Iterator[None]:
    """Inside the block, SIGTERM and SIGHUP raise :class:`Terminated` (main thread only).

    After the first one, further stop signals are ignored so that they
    cannot cut the clean-up short (SIGKILL still works, and the children
    have a parent-death signal). A SIGHUP already ignored (``nohup``) stays
    ignored. The previous handlers come back when the block ends.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        raise Terminated(signum)

    previous: dict[signal.Signals, Any] = {}
    for sig in STOP_SIGNALS:
        if signal.getsignal(sig) is signal.SIG_IGN:
            continue
        previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
