"""``stratabench``: parse, build typed options, run, report, exit.

Each sub-command lives in its own module with ``add_parser(subparsers)``,
which sets the parser's ``handler``: a function of the parsed arguments that
returns the exit code. This module is the only place that prints ``error:``
lines and turns exceptions into exit codes.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from stratabench.cli.signals import interrupt_description, interrupted_exit_code, stop_signals_interrupt
from stratabench.errors import StratabenchError, UsageError, exit_statuses
from stratabench.report.formats.terminal import visible

__all__ = ["build_parser", "entry_point", "main"]

#: Sub-command modules, in the order ``--help`` lists them.
COMMANDS = ("run", "advise", "ab", "load", "list", "report", "compare", "dataset", "timeit", "services", "clean",
            "serve")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: a bad argument is a :class:`UsageError`, not usage text and exit 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # argparse takes "-1e308" or "-inf" for an option, and then blames a missing value: a number that
        # starts with '-' is a value, which its option's type checks.
        self._negative_number_matcher = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^-(inf|nan)$", re.I)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}; see '{self.prog} --help'")


def _exit_statuses_epilog() -> str:
    return "exit statuses:\n" + "\n".join(f"  {code:<4} {meaning}" for code, meaning in exit_statuses().items())


WELCOME = """
stratabench: what it costs to move records between storage and usable objects, on this machine.

Three quick starts:
  stratabench run bulkload --quick         # about 1 min: which format loads fastest, smallest, leanest
  stratabench run --quick                  # every default suite, small: several minutes
  stratabench run --data FILE.jsonl        # your own records: every codec, compressor, local store

stratabench list shows every suite and plugin; stratabench COMMAND --help shows a command's options;
stratabench run with no option is the full study run (several minutes: it prints its plan first).
"""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="stratabench",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Measure what it costs to move records between storage and usable objects: "
            "codecs, compressors, stores, caches and object mappers, on your machine and data."
        ),
        epilog="Run 'stratabench COMMAND --help' for a command's options.\n\n" + _exit_statuses_epilog(),
    )
    from stratabench import __version__

    parser.add_argument("--version", action="version", version=f"stratabench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module_name = f"stratabench.cli.{name}"
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            # Never a silence: a command missing from --help would look like
            # a command that does not exist.
            raise StratabenchError(
                f"the {name} command cannot be loaded: importing {module_name} failed with "
                f"{type(error).__name__}: {error}; reinstall stratabench (scripts/install)"
            ) from error
        module.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return the exit code (never raises for user errors)."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            print(WELCOME.strip())
            return 0
        with stop_signals_interrupt():
            code: int = args.handler(args)
        return code
    except StratabenchError as error:
        print(f"error: {visible(error.message)}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt as interrupt:
        print(f"{interrupt_description(interrupt)}: results measured so far are kept", file=sys.stderr)
        return interrupted_exit_code(interrupt)
    except BrokenPipeError:
        return 141


def entry_point() -> None:
    """The ``stratabench`` console script."""
    sys.exit(main())


if __name__ == "__main__":
    entry_point()
