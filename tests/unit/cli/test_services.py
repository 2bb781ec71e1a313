"""``stratabench services``: the parser and the one-line format, without servers."""

from __future__ import annotations

import argparse

import pytest

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


def test_options_go_before_or_after_the_names() -> None:
    parser = argparse.ArgumentParser()
    services_cli.add_parser(parser.add_subparsers(dest="command"))
    for argv in (["services", "up", "--timeout", "5", "redis"], ["services", "up", "redis", "--timeout", "5"]):
        args = parser.parse_args(argv)
        assert (args.action, args.names, args.timeout) == ("up", ["redis"], 5.0)
    assert parser.parse_args(["services", "status", "--json", "redis"]).names == ["redis"]


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "-inf", "1e300", "abc"])
def test_timeout_out_of_range_is_one_line(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    from stratabench.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(["services", "up", f"--timeout={value}", "redis"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --timeout: {value!r}" in err and "Traceback" not in err
