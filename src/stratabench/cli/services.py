"""``stratabench services up|status|down [NAME ...]``: private local servers.

Starts Redis, memcached, PostgreSQL, MariaDB and a MongoDB-compatible
server on free loopback ports in temporary directories, shows them, and
stops them by their own process ids. One line per service::

    redis       up           redis://127.0.0.1:41234/0   pid 1234

URLs are shown with passwords masked. ``--show-passwords`` prints them
whole, for pasting into ``--store``; ``stratabench run`` finds the servers
of ``services up`` by itself only through ``--services local`` (its own) or
a ``--store`` URL.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from stratabench.cli.arguments import names
from stratabench.services.lifecycle import ServiceStatus, down, status, up

__all__ = ["add_parser", "format_status", "handle", "run"]

ACTIONS = ("up", "status", "down")


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "services",
        help="start, show or stop private Redis, memcached, PostgreSQL, MariaDB and MongoDB-compatible servers",
        description="Start private servers on free loopback ports in temporary directories (up), show them "
        "(status), or stop them by their own process ids (down). With no NAME, every service.",
    )
    parser.add_argument("action", choices=ACTIONS, help="up, status or down")
    parser.add_argument("names", nargs="*", metavar="NAME", help="redis, memcached, postgresql, mariadb, mongodb")
    parser.add_argument("--json", action="store_true", help="machine-readable output (passwords masked)")
    parser.add_argument(
        "--show-passwords", action="store_true", help="print URLs with their passwords, to pass them as --store"
    )
    parser.add_argument("--timeout", type=float, default=None, metavar="S", help="seconds each server may take to start")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    return run(
        args.action, names(args.names), as_json=args.json, show_passwords=args.show_passwords, timeout=args.timeout
    )


def format_status(line: ServiceStatus, *, show_passwords: bool = False) -> str:
    """One line: name, state, URL and pids, or the reason it is not running."""
    service = line.service
    if service is not None and line.state in ("up", "stopped"):
        url = service.url if show_passwords else service.redacted_url
        pids = ",".join(str(pid) for pid in service.pids)
        return f"{line.name:<11} {line.state:<12} {url:<58} pid {pids}"
    return f"{line.name:<11} {line.state:<12} {line.reason}".rstrip()


def run(
    action: str,
    names: Sequence[str] = (),
    *,
    as_json: bool = False,
    show_passwords: bool = False,
    timeout: float | None = None,
) -> int:
    """Do ``action`` on the services ``names`` and print one line each.

    Returns 0 when every service asked for is in the state asked for; 1 when
    one named on the command line could not start, or when ``up`` of every
    service started none. Unavailable services are only reported by a bare
    ``up``.
    """
    if action == "up":
        lines = up(names, timeout=timeout)
    elif action == "down":
        lines = down(names)
    else:
        lines = status(names)
    if as_json:
        entries = []
        for line in lines:
            entry = line.to_json()
            if show_passwords and line.service is not None:
                entry["url"] = line.service.url
            entries.append(entry)
        print(json.dumps(entries, indent=2))
    else:
        for line in lines:
            print(format_status(line, show_passwords=show_passwords))
    if action == "up":
        failed = [line for line in lines if line.state == "failed" or (names and line.state != "up")]
        if failed or not any(line.state == "up" for line in lines):
            return 1
    return 0
