"""Arguments shared by several sub-commands, and their conversion to options."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from stratabench.errors import UsageError
from stratabench.options import EngineOptions

__all__ = ["add_detail_argument", "add_engine_arguments", "add_format_argument", "engine_options", "names",
           "number_at_least", "parse_settings", "positive_int"]


def names(values: list[str] | None) -> tuple[str, ...]:
    """Names given by a repeated flag or as comma lists (``--codec json,msgpack --codec cbor2``), in order."""
    found = [name.strip() for value in values or () for name in value.split(",")]
    return tuple(dict.fromkeys(name for name in found if name))


def positive_int(text: str) -> int:
    """argparse type: a whole number of 1 or more, with a readable error."""
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be 1 or more")
    return value


def number_at_least(minimum: float, *, what: str = "a number", below: str = "") -> Callable[[str], float]:
    """argparse type: a number no smaller than ``minimum``, with readable errors.

    ``what`` names the kind of number in the error for text that is none;
    ``below`` replaces the default message for a number under ``minimum``.
    """

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text!r} {below or f'must be {minimum:g} or more'}")
        return value

    return parse


_seconds = number_at_least(0, what="a number of seconds", below="must not be negative")


def add_format_argument(parser: argparse._ActionsContainer) -> None:
    """``--format``: one of the registered report formats, listed from the registry."""
    from stratabench.report.formats import REPORTERS

    parser.add_argument("--format", default="terminal",
                        help=f"report format: {', '.join(REPORTERS.names)} (default terminal)")


def add_detail_argument(parser: argparse._ActionsContainer) -> None:
    """``--detail``: how much of the report follows each suite's answer."""
    from stratabench.report.document import DETAILS

    parser.add_argument("--detail", choices=DETAILS, default="tables",
                        help="summary: each suite's answer only; tables (default): and the suite's tables; "
                        "full: and every cell with its loops, spread and status")


def add_engine_arguments(parser: argparse.ArgumentParser, *, samples: int = 5) -> None:
    """The measurement options: samples, warm-ups, calibration, isolation."""
    group = parser.add_argument_group("measurement")
    group.add_argument("--samples", type=positive_int, default=samples, metavar="N",
                       help=f"timed samples per cell (default {samples})")
    group.add_argument("--warmups", type=int, default=1, metavar="N",
                       help="untimed warm-up loops before the samples (default 1)")
    group.add_argument("--min-time", type=_seconds, default=0.1, metavar="SECONDS",
                       help="calibrate loops so each sample lasts at least this long (default 0.1)")
    group.add_argument("--memory-samples", type=int, default=1, metavar="N",
                       help="operations traced for alloc/retained bytes, in a separate pass (default 1; 0 skips)")
    group.add_argument("--in-process", action="store_true",
                       help="measure every cell in this process instead of a fresh worker process each")
    group.add_argument("--cell-timeout", type=_seconds, default=900.0, metavar="SECONDS",
                       help="fail a cell whose worker runs longer than this (default 900)")


def engine_options(args: argparse.Namespace) -> EngineOptions:
    return EngineOptions(
        samples=args.samples,
        warmups=args.warmups,
        min_sample_ns=int(args.min_time * 1e9),
        memory_samples=args.memory_samples,
        isolate=not args.in_process,
        cell_timeout_s=args.cell_timeout,
    )


def parse_settings(pairs: list[str] | None) -> dict[str, str]:
    """``--set name=value`` pairs; names are namespaced (``sqlite.journal_mode``)."""
    settings = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        if not sep or "." not in name:
            raise UsageError(f"--set {pair!r}: expected PLUGIN.SETTING=VALUE, for example sqlite.journal_mode=wal")
        settings[name.strip()] = value.strip()
    return settings
