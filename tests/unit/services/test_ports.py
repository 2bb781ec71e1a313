"""Free loopback ports."""

from __future__ import annotations

import socket

from stratabench.services.ports import LOOPBACK, free_port, port_answers


def test_free_port_can_be_bound_and_answers_only_when_listened_on() -> None:
    port = free_port()
    assert 1024 <= port <= 65535
    assert not port_answers(port)
    with socket.socket() as server:
        server.bind((LOOPBACK, port))
        server.listen()
        assert port_answers(port)
