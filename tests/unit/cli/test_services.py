"""``stratabench services``: the parser and the one-line format, without servers."""

from __future__ import annotations

import argparse

from stratabench.cli import services as services_cli
from stratabench.services.base import RunningService
from stratabench.services.lifecycle import ServiceStatus

RUNNING = RunningService(
    name="postgresql", url="postgresql://stratabench:pw123@127.0.0.1:5433/postgres", pids=(42,), port=5433,
    workdir="/tmp/x", executable="/usr/lib/postgresql/15/bin/postgres", create_times=(1.0,),
)  # fmt: skip


def test_parser() -> None:
    parser = argparse.ArgumentParser()
    services_cli.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["services", "up", "redis", "mariadb", "--json"])
    assert (args.action, args.names, args.json, args.show_passwords) == ("up", ["redis", "mariadb"], True, False)
    assert args.handler is services_cli.handle


def test_one_line_per_service_without_password() -> None:
    line = services_cli.format_status(ServiceStatus("postgresql", "up", RUNNING))
    assert line.split()[:2] == ["postgresql", "up"]
    assert "postgresql://stratabench:***@127.0.0.1:5433/postgres" in line and line.endswith("pid 42")
    assert "pw123" not in line
    assert "pw123" in services_cli.format_status(ServiceStatus("postgresql", "up", RUNNING), show_passwords=True)
    assert "pw123" not in str(ServiceStatus("postgresql", "up", RUNNING).to_json())
    missing = services_cli.format_status(ServiceStatus("mongodb", "unavailable", reason="not built"))
    assert missing.split(None, 2) == ["mongodb", "unavailable", "not built"]
