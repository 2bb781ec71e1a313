"""``stratabench serve parking``: run one of the parking study's Python servers on 127.0.0.1.

The process contract is the one every parking server keeps (see
:mod:`stratabench.systems.parking.serve`): ``listening 127.0.0.1:PORT`` on
stdout when ready, ``statements`` on stdin answers the SQL counts, and the
server stops when stdin closes (or on Ctrl-C).
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve", help="run a study's service (the parking servers) on 127.0.0.1",
        description="Run one of the parking study's Python servers on 127.0.0.1 until stdin closes.",
    )
    services = parser.add_subparsers(dest="service", metavar="SERVICE", required=True)
    parking = services.add_parser("parking", help="the parking study's HTTP service (spec: docs/studies/parking.md)",
                                  description="Serve the parking API; the database must hold the parking "
                                  "tables (python -m stratabench.systems.parking.schema URL creates them).")
    from stratabench.systems.parking.serve import add_arguments

    add_arguments(parking)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from stratabench.systems.parking.serve import serve

    try:
        serve(args.impl, args.db, port=args.port, log_file=args.log)
    except KeyboardInterrupt:
        return 130
    return 0
