"""The HTTP front of both Python parking servers (docs/studies/parking.md §3).

Built on the standard library's ``http.server``: single-threaded, one
request at a time, HTTP/1.0 with the connection closed after every answer —
the shape of the study's own Python server (``BaseHTTPServer``), so the two
Python servers differ only in their data layer, and no dependency is added.
A faster front (an asyncio protocol, a C parser) would shave the same few
tens of microseconds from both and change no ratio the study asks about.

It binds 127.0.0.1 only and handles GET only, as the reference server did
(any other method answers 501). The function is the last segment of the path;
an unknown function or a ``service_descr`` that is not JSON answers HTTP 500
``Internal server error``; everything else is the service's JSON answer.
With logging on, every request line and answer body goes to the log
(logger ``parking.http``), next to SQLAlchemy's statements.
"""

from __future__ import annotations

import json
import logging
import socketserver
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import TYPE_CHECKING, Any

from stratabench.systems.parking.protocol import DEFAULT_STATUS, decode_query

if TYPE_CHECKING:
    from stratabench.systems.parking.servers.base import ParkingService

__all__ = ["LOOPBACK", "ParkingHTTPServer"]

LOOPBACK = "127.0.0.1"
_INTERNAL_ERROR = b"Internal server error"
_log = logging.getLogger("parking.http")


class _ParkingHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    server_version = "stratabench-parking"
    sys_version = ""
    timeout = 15  # a client that stalls cannot hold the single thread forever
    server: ParkingHTTPServer

    def do_GET(self) -> None:
        self._answer(self.path.partition("?")[2])

    def _answer(self, query: str) -> None:
        _log.debug("request: %s", self.requestline)
        function = self.path.partition("?")[0].rsplit("/", 1)[-1]
        params: dict[str, Any] = dict(decode_query(query))
        if function not in DEFAULT_STATUS:
            self._send(500, "text/plain", _INTERNAL_ERROR)
            return
        if "service_descr" in params:
            try:
                params["service_descr"] = json.loads(params["service_descr"])
            except (ValueError, RecursionError):
                self._send(500, "text/plain", _INTERNAL_ERROR)
                return
        body = json.dumps(self.server.service.handle(function, params)).encode()
        self._send(200, "application/json", body)

    def _send(self, code: int, content_type: str, body: bytes) -> None:
        _log.debug("answer: %d %s", code, body.decode("utf-8", "replace"))
        self.send_response_only(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        _log.debug(format, *args)


class ParkingHTTPServer(HTTPServer):
    """One thread, one request at a time, on 127.0.0.1 (``port`` 0 picks a free one)."""

    def __init__(self, port: int, service: ParkingService) -> None:
        self.service = service
        super().__init__((LOOPBACK, port), _ParkingHandler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind asks DNS for the host's full name: slow and pointless on loopback.
        socketserver.TCPServer.server_bind(self)
        self.server_name = LOOPBACK
        self.server_port = self.server_address[1]

    def handle_error(self, request: Any, client_address: Any) -> None:
        _log.exception("a request from %s failed", client_address)
