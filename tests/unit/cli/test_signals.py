"""SIGTERM and SIGHUP are interrupts, like Ctrl-C: same clean-up, exit code 128 + the signal."""

from __future__ import annotations

import os
import signal

import pytest

from stratabench.cli.signals import (
    Terminated,
    interrupt_description,
    interrupted_exit_code,
    stop_signals_interrupt,
)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_stop_signal_raises_an_interrupt(sig: signal.Signals, code: int) -> None:
    # Under nohup the tests inherit SIGHUP ignored, which the run keeps ignored by design
    # (test_an_ignored_sighup_stays_ignored); this test starts from the default disposition.
    inherited = signal.signal(sig, signal.SIG_DFL)
    try:
        cleaned_up = False
        with pytest.raises(KeyboardInterrupt) as caught:
            with stop_signals_interrupt():
                try:
                    os.kill(os.getpid(), sig)
                    signal.sigtimedwait([], 0)  # give the handler its turn
                finally:
                    cleaned_up = True
        assert cleaned_up and isinstance(caught.value, Terminated)
        assert interrupted_exit_code(caught.value) == code
        assert interrupt_description(caught.value) == f"terminated ({sig.name})"
        assert signal.getsignal(sig) == signal.SIG_DFL
    finally:
        signal.signal(sig, inherited)


def test_ctrl_c_keeps_its_code_and_words() -> None:
    assert interrupted_exit_code(KeyboardInterrupt()) == 130
    assert interrupt_description(KeyboardInterrupt()) == "interrupted"


def test_an_ignored_sighup_stays_ignored() -> None:
    # nohup: a closed terminal must not stop the run.
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with stop_signals_interrupt():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGHUP)
    finally:
        signal.signal(signal.SIGHUP, previous)
