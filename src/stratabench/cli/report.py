"""``stratabench report FILE``: render a results file again, in any format."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from stratabench.cli.arguments import add_detail_argument, add_format_argument, file_name
from stratabench.errors import NoCellsError, OutputError, OutputExistsError, UsageError
from stratabench.report.formats import REPORTERS
from stratabench.results.format import ResultsFile, load
from stratabench.suites.kit.reports import run_report

__all__ = ["add_parser", "read_results"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report", help="render a results file as a terminal table, Markdown, CSV, JSON or HTML",
        description="Render a results file written by 'stratabench run' with the tables of its suites. "
        "A file with no cells exits 65; a truncated file is read up to its last whole record, with a warning.",
    )
    parser.add_argument("file", help="a results file (JSON Lines)")
    add_format_argument(parser)
    add_detail_argument(parser)
    parser.add_argument("-o", "--output", metavar="FILE", type=file_name,
                        help="write here instead of standard output; an existing file is refused (the results "
                        "file read, always), and so is a directory: name the file to write")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --output file")
    parser.set_defaults(handler=handle)


def read_results(path: str) -> ResultsFile:
    """Load a results file, printing the reader's warnings (a truncated tail) as ``warning:`` lines."""
    results = load(path)
    for warning in results.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return results


def handle(args: argparse.Namespace) -> int:
    reporter = REPORTERS.get(args.format)()
    results = read_results(args.file)
    if not results.cells:
        raise NoCellsError(f"{args.file}: no cells (a header only: the run measured nothing before it stopped)")
    if args.output is not None:
        _check_output(Path(args.file), args.output, overwrite=args.overwrite)
    text = reporter.render_report(run_report(results.cells, results.header, args.detail))
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        with open(args.output, "w" if args.overwrite else "x", encoding="utf-8") as out:
            out.write(text)
    except FileExistsError:
        raise OutputExistsError(f"{args.output} exists; choose another --output or pass --overwrite") from None
    except OSError as error:
        raise OutputError(f"cannot write {args.output}: {error.strerror}") from None
    return 0


def _check_output(source: Path, output: str, *, overwrite: bool) -> None:
    """Refuse an output that is the results file read, a directory, or (without ``overwrite``) an existing file.

    The report is rendered before it is written, so writing over its own
    input would lose the measurements for good: no flag allows it.
    """
    target = Path(output)
    if output.endswith(("/", os.sep)) or target.is_dir():
        raise UsageError(f"-o {output} is a directory; name the file to write in it, such as "
                         f"-o {output.rstrip('/') or '.'}/report.txt")
    if target.exists():
        try:
            same = target.samefile(source)
        except OSError:
            same = False
        if same:
            raise UsageError(f"-o {output} is the results file being read; write the report to another file")
        if not overwrite:
            raise OutputExistsError(f"{output} exists; choose another --output or pass --overwrite to replace it")
