"""Run one Python parking server as a process: the contract all four servers share.

::

    python -m stratabench.systems.parking.serve --impl python-orm --db URL [--port 0] [--log FILE]
    stratabench serve parking --impl python-core --db URL ...

The server connects (start-up, not measured), prints ``listening
127.0.0.1:PORT`` on stdout when it accepts calls, and stops when its
standard input closes — so a suite that dies never leaves it running. It
reads commands on standard input, one a line: ``statements`` prints
``statements {JSON}``, the SQL statements sent so far by kind (counted from
the first call on; see :mod:`.statements`). An empty ``--log`` is logging
off; a file is logging on: every HTTP request and answer and every SQL
statement with its parameters and result rows.

The database must hold the parking tables already
(``python -m stratabench.systems.parking.schema URL`` creates them).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING

from stratabench.errors import StoreError, StratabenchError
from stratabench.redact import redact
from stratabench.systems.parking.http_server import LOOPBACK, ParkingHTTPServer
from stratabench.systems.parking.schema import create_parking_engine
from stratabench.systems.parking.servers import SERVERS
from stratabench.systems.parking.statements import StatementCounter

if TYPE_CHECKING:
    from sqlalchemy import Engine

__all__ = ["add_arguments", "configure_logging", "main", "serve"]

_LOGGERS = ("parking", "sqlalchemy.engine")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The server's options, shared by ``stratabench serve parking`` and ``python -m``."""
    # Checked when parsed, not listed as argparse choices: listing them imports every server, and so
    # SQLAlchemy (about 2 s), whenever any stratabench command builds its parser.
    parser.add_argument("--impl", required=True, type=_server_name, metavar="NAME",
                        help="which Python server: python-orm (SQLAlchemy ORM) or python-core (SQL, no ORM)")
    parser.add_argument("--db", required=True, metavar="URL",
                        help="database URL: sqlite:///PATH, postgresql://..., mysql://...")  # fmt: skip
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--log", default="", metavar="FILE", help="log every HTTP message and SQL statement here")


def _server_name(text: str) -> str:
    if text not in SERVERS:
        raise argparse.ArgumentTypeError(f"no Python parking server {text!r}; servers: {', '.join(SERVERS.names)}")
    return text


def configure_logging(log_file: str) -> None:
    """Logging on (to ``log_file``: HTTP messages, SQL with parameters and rows) or off (empty)."""
    if not log_file:
        # Off means off: no handler, so not even Python's last-resort stderr handler writes.
        for name in _LOGGERS:
            logging.getLogger(name).addHandler(logging.NullHandler())
            logging.getLogger(name).propagate = False
        return
    handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        # DEBUG on sqlalchemy.engine adds the result rows to the statements and parameters.
        logger.setLevel(logging.DEBUG)
        logger.propagate = False


def _read_commands(stdin: IO[str], stdout: IO[str], server: ParkingHTTPServer, counter: StatementCounter) -> None:
    for line in stdin:
        if line.strip() == "statements":
            stdout.write(f"statements {json.dumps(counter.snapshot())}\n")
            stdout.flush()
    server.shutdown()


def _connect_once(engine: Engine, db_url: str) -> None:
    """Connect and learn the server's dialect now (start-up, not the first call), or say why not in one line."""
    from sqlalchemy.exc import SQLAlchemyError

    try:
        with engine.connect():
            pass
    except SQLAlchemyError as error:
        reason = str(getattr(error, "orig", None) or error).splitlines()[0]
        raise StoreError(f"parking database {redact(db_url)}: {reason}") from None


def serve(impl: str, db_url: str, *, port: int = 0, log_file: str = "",
          stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> None:  # fmt: skip
    """Serve until ``stdin`` closes (see the module docstring)."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    configure_logging(log_file)
    service_class = SERVERS.get(impl)
    engine = create_parking_engine(db_url)
    try:
        _connect_once(engine, db_url)
        counter = StatementCounter()
        counter.attach(engine)
        service = service_class(engine)
        server = ParkingHTTPServer(port, service)
        try:
            stdout.write(f"listening {LOOPBACK}:{server.server_port}\n")
            stdout.flush()
            threading.Thread(target=_read_commands, args=(stdin, stdout, server, counter), daemon=True).start()
            server.serve_forever(poll_interval=0.2)
        finally:
            server.server_close()
            service.close()
    finally:
        engine.dispose()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m stratabench.systems.parking.serve``."""
    parser = argparse.ArgumentParser(prog="python -m stratabench.systems.parking.serve",
                                     description="Run one Python parking server on 127.0.0.1.")  # fmt: skip
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        serve(args.impl, args.db, port=args.port, log_file=args.log)
    except StratabenchError as error:
        print(f"error: {error.message}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
