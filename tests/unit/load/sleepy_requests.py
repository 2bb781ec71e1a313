"""A request plan with no server: each request sleeps a millisecond; one client can be told to die."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from stratabench.load.integrity import CheckFailures


@dataclass
class SleepyRequests:
    dies_after: int | None
    sent: int = 0
    check_failures: CheckFailures = field(default_factory=CheckFailures)

    def prepare(self) -> None:
        pass

    def send(self) -> str:
        self.sent += 1
        if self.dies_after is not None and self.sent > self.dies_after:
            os._exit(3)  # a client process that crashes without a word
        time.sleep(0.001)
        return "read"

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class SleepyPlan:
    dying_client: int | None = None
    preload: tuple[str, ...] = ()

    def open(self, index: int) -> SleepyRequests:
        return SleepyRequests(50 if index == self.dying_client else None)
