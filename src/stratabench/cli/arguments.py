"""Arguments shared by several sub-commands, and their conversion to options."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from stratabench.errors import UsageError
from stratabench.options import EngineOptions

__all__ = ["add_engine_arguments", "add_format_argument", "number_at_least", "engine_options", "parse_settings", "positive_int"]


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


#: Presets in the spirit of pyperf's --fast and --rigorous: (target, budget s, min samples, max samples, min-time s).
PRESETS: dict[str, tuple[float, float, int, int, float]] = {
    "fast": (0.05, 0.3, 6, 20, 0.05),
    "default": (0.02, 1.0, 6, 40, 0.1),
    "rigorous": (0.01, 6.0, 10, 200, 0.2),
}


def add_engine_arguments(parser: argparse.ArgumentParser, *, samples: int | None = None) -> None:
    """The measurement options: sampling (adaptive unless ``samples`` is given), calibration, isolation."""
    group = parser.add_argument_group("measurement")
    fast, default, rigorous = PRESETS["fast"], PRESETS["default"], PRESETS["rigorous"]
    preset = group.add_mutually_exclusive_group()
    preset.add_argument("--fast", dest="preset", action="store_const", const="fast",
                        help=f"rough answers quickly: target {100 * fast[0]:g}%%, budget {fast[1]:g} s a cell, "
                        f"at most {fast[3]} samples of {fast[4]:g} s")
    preset.add_argument("--rigorous", dest="preset", action="store_const", const="rigorous",
                        help=f"tighter answers, slowly: target {100 * rigorous[0]:g}%%, budget {rigorous[1]:g} s "
                        f"a cell, {rigorous[2]} to {rigorous[3]} samples of {rigorous[4]:g} s")
    group.add_argument("--samples", type=positive_int, default=samples, metavar="N",
                       help="a fixed number of timed samples per cell" + (
                           f" (default {samples})" if samples else
                           " (default: adaptive, until the median's interval, of 95%% or more, is within --target)"))
    group.add_argument("--target", type=_percent, default=None, metavar="PERCENT",
                       help=f"adaptive sampling stops when the median's interval is within this %% of it "
                       f"(default {100 * default[0]:g})")
    group.add_argument("--budget", type=_seconds, default=None, metavar="SECONDS",
                       help=f"adaptive sampling time per cell; a cell that misses --target by then is flagged "
                       f"unstable (default {default[1]:g})")
    group.add_argument("--min-samples", type=positive_int, default=None, metavar="N",
                       help=f"adaptive floor (default {default[2]}: the fewest whose interval reaches 95%%)")
    group.add_argument("--max-samples", type=positive_int, default=None, metavar="N",
                       help=f"adaptive cap (default {default[3]})")
    group.add_argument("--warmups", type=int, default=1, metavar="N",
                       help="untimed warm-up loops before the samples (default 1)")
    group.add_argument("--min-time", type=_seconds, default=None, metavar="SECONDS",
                       help=f"calibrate loops so each sample lasts at least this long (default {default[4]:g})")
    group.add_argument("--memory-samples", type=int, default=1, metavar="N",
                       help="operations traced for alloc/retained bytes, in a separate pass (default 1; 0 skips)")
    group.add_argument("--in-process", action="store_true",
                       help="measure every cell in this process instead of a fresh worker process each")
    group.add_argument("--spawn", action="store_true",
                       help="start a new interpreter for each cell's worker instead of forking it from a "
                       "zygote that imported the plugins once (slower; the same isolation)")
    group.add_argument("--cell-timeout", type=_seconds, default=900.0, metavar="SECONDS",
                       help="fail a cell whose worker runs longer than this (default 900)")


def _percent(text: str) -> float:
    value = number_at_least(0, what="a percentage")(text.rstrip("%"))
    if not 0 < value < 100:
        raise argparse.ArgumentTypeError(f"{text!r} must be a percentage above 0 and below 100")
    return value / 100


def engine_options(args: argparse.Namespace) -> EngineOptions:
    """The engine options of the parsed arguments: the preset's values, each replaced by an explicit option."""
    target, budget, min_samples, max_samples, min_time = PRESETS[getattr(args, "preset", None) or "default"]

    def given(name: str, preset: float) -> float:
        value = getattr(args, name, None)
        return preset if value is None else float(value)

    floor = int(given("min_samples", min_samples))
    return EngineOptions(
        samples=args.samples,
        min_samples=floor,
        max_samples=max(int(given("max_samples", max_samples)), floor),
        target=given("target", target),
        cell_budget_ns=int(given("budget", budget) * 1e9),
        warmups=args.warmups,
        min_sample_ns=int(given("min_time", min_time) * 1e9),
        memory_samples=args.memory_samples,
        isolate=not args.in_process,
        fork=not args.spawn,
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
