"""``stratabench services up|status|down [NAME ...]``: private local servers.

Starts Redis, memcached, PostgreSQL, MariaDB and a MongoDB-compatible
server on free loopback ports in temporary directories, shows them, and
stops them by their own process ids. One line per service::

    redis       up           redis://:***@127.0.0.1:41234/0   pid 1234

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

from stratabench.services.lifecycle import ServiceStatus, down, status, up

__all__ = ["add_parser", "format_status", "handle", "run"]

ACTIONS = ("up", "status", "down")


#: The range of ``--timeout``: long enough for initdb on a slow disk, short enough to notice a hang.
TIMEOUT_RANGE_S = (0.5, 3600.0)


def start_timeout(text: str) -> float:
    """argparse type of ``--timeout``: finite seconds within :data:`TIMEOUT_RANGE_S`."""
    low, high = TIMEOUT_RANGE_S
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not low <= value <= high:  # also false for nan
        raise argparse.ArgumentTypeError(f"{text!r} is out of range; give {low:g} to {high:g} seconds")
    return value


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "services",
        help="start, show or stop private Redis, memcached, PostgreSQL, MariaDB and MongoDB-compatible servers",
        description="Start private servers on free loopback ports in temporary directories (up), show them "
        "(status), or stop them by their own process ids (down). With no NAME, every service.",
    )
    # One sub-parser per action, so that options may come before or after the
    # names (`services up --timeout 5 redis`): with the action and the names as
    # two positionals of one parser, argparse stops reading names at an option.
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    helps = {"up": "start servers", "status": "show servers", "down": "stop servers"}
    for action in ACTIONS:
        sub = actions.add_parser(action, help=helps[action], description=f"{helps[action].capitalize()}.")
        sub.add_argument("names", nargs="*", metavar="NAME", help="redis, memcached, postgresql, mariadb, mongodb")
        sub.add_argument("--json", action="store_true", help="machine-readable output (passwords masked)")
        sub.add_argument(
            "--show-passwords", action="store_true", help="print URLs with their passwords, to pass them as --store"
        )
        if action == "up":
            low, high = TIMEOUT_RANGE_S
            sub.add_argument("--timeout", type=start_timeout, default=None, metavar="S",
                             help=f"seconds each server may take to start ({low:g} to {high:g})")
        sub.set_defaults(handler=handle, timeout=None)


def handle(args: argparse.Namespace) -> int:
    return run(
        args.action, args.names, as_json=args.json, show_passwords=args.show_passwords, timeout=args.timeout
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
