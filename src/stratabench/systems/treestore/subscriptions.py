"""Change subscriptions and operational providers, each served by a handler thread (docs/studies/treestore.md §4.6).

Payloads cross as bytes: the sender serializes the diff (or the request)
with the study's JSON codec, every handler parses it, and the sender blocks
until every addressed handler has replied or the timeout has passed, as
sysrepo's event pipes do.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

from stratabench.errors import StratabenchError
from stratabench.systems.treestore import json_codec

__all__ = ["ChangeHandler", "Handler", "ProviderHandler", "SubscriptionError", "publish"]

_STOP = object()


class SubscriptionError(StratabenchError):
    """A subscriber did not answer in time or failed."""


class Handler:
    """One subscription's thread, fed by a queue of (payload, reply queue)."""

    def __init__(self, name: str) -> None:
        self._inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            item = self._inbox.get()
            if item is _STOP:
                return
            payload, reply = item
            try:
                reply.put((True, self.handle(payload)))
            except Exception as exc:  # noqa: BLE001 -- a subscriber's failure is reported to the sender
                reply.put((False, f"{type(exc).__name__}: {exc}"))

    def handle(self, payload: bytes) -> bytes | None:
        raise NotImplementedError

    def send(self, payload: bytes, reply: queue.SimpleQueue[Any]) -> None:
        self._inbox.put((payload, reply))

    def stop(self) -> None:
        self._inbox.put(_STOP)
        self._thread.join(timeout=5)


class ChangeHandler(Handler):
    """Calls ``callback(event, diff_document)``; the event is ``change`` or ``done``."""

    def __init__(self, callback: Callable[[str, dict[str, Any]], None]) -> None:
        self.callback = callback
        super().__init__("treestore-change")

    def handle(self, payload: bytes) -> bytes | None:
        message = json_codec.loads(payload)
        self.callback(message["event"], message["diff"])
        return None


class ProviderHandler(Handler):
    """Answers an operational request (a path) with ``provider(path)``, a canonical document."""

    def __init__(self, path: str, provider: Callable[[str], dict[str, Any]]) -> None:
        self.path = path
        self.provider = provider
        super().__init__("treestore-provider")

    def handle(self, payload: bytes) -> bytes | None:
        return json_codec.dumps(self.provider(json_codec.loads(payload)["path"]))


def publish(handlers: list[Handler], payload: bytes, timeout: float) -> list[bytes | None]:
    """Send ``payload`` to every handler and wait for all replies (raising on a failure or timeout)."""
    replies: queue.SimpleQueue[Any] = queue.SimpleQueue()
    for handler in handlers:
        handler.send(payload, replies)
    answers = []
    for _ in handlers:
        try:
            ok, answer = replies.get(timeout=timeout)
        except queue.Empty:
            raise SubscriptionError(f"a subscriber did not answer within {timeout:g} s") from None
        if not ok:
            raise SubscriptionError(f"a subscriber failed: {answer}")
        answers.append(answer)
    return answers
