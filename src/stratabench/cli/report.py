"""``stratabench report FILE``: render a results file again, in any format."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from stratabench.cli.arguments import add_format_argument
from stratabench.errors import OutputError
from stratabench.report.formats import REPORTERS
from stratabench.results.format import load
from stratabench.suites.kit.reports import run_report

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report", help="render a results file as a terminal table, Markdown, CSV, JSON or HTML",
        description="Render a results file written by 'stratabench run' with the tables of its suites.",
    )
    parser.add_argument("file", help="a results file (JSON Lines)")
    add_format_argument(parser)
    parser.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    reporter = REPORTERS.get(args.format)()
    results = load(args.file)
    text = reporter.render_report(run_report(results.cells, results.header))
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as error:
        raise OutputError(f"cannot write {args.output}: {error.strerror}") from None
    return 0
