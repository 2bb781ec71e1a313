"""Arguments shared by several sub-commands, and their conversion to options."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from stratabench.errors import UsageError
from stratabench.options import EngineOptions

__all__ = [
    "MAX_SAMPLES", "add_detail_argument", "add_engine_arguments", "add_format_argument", "add_output_arguments",
    "engine_options", "file_name", "fraction", "names", "number_in", "parse_settings", "positive_int", "whole_in",
]


def names(values: list[str] | None, flag: str = "the list") -> tuple[str, ...]:
    """Names given by a repeated flag or as comma lists (``--codec json,msgpack --codec cbor2``), in order.

    A flag given with nothing in it (``--codec ''``) is refused rather than read as "every one".
    """
    found = [name.strip() for value in values or () for name in value.split(",")]
    if values and not any(found):
        raise UsageError(f"{flag} is empty; name at least one (stratabench list shows them), or leave {flag} out")
    return tuple(dict.fromkeys(name for name in found if name))


def file_name(text: str) -> str:
    """An argparse type for a file to write: an empty name is refused (``Path('')`` would be ``.``, the directory)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is empty; give the name of a file, or leave the option out")
    return text


#: The most timed samples, warm-ups or traced operations one cell may take:
#: far beyond any useful figure, short of a run that never ends.
MAX_SAMPLES = 10_000


def _number(text: str, what: str) -> float:
    try:
        value = float(text.replace("_", "").replace(",", "")) if text.strip() else math.nan
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not {what} (a finite number)")
    return value


def _range(low: float, high: float, low_open: bool) -> str:
    return f"above {low:g}, up to {high:g}" if low_open else f"from {low:g} to {high:g}"


def number_in(low: float, high: float, *, what: str = "a number", low_open: bool = False) -> Callable[[str], float]:
    """argparse type: a finite number from ``low`` (or above it, with ``low_open``) to ``high``.

    The error names the value and the range; argparse adds the flag.
    """

    def parse(text: str) -> float:
        value = _number(text, what)
        if value < low or (low_open and value == low) or value > high:
            raise argparse.ArgumentTypeError(f"{text!r} is out of range: use {what} {_range(low, high, low_open)}")
        return value

    return parse


def whole_in(low: int, high: int) -> Callable[[str], int]:
    """argparse type: a whole number from ``low`` to ``high``, with readable errors."""

    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", "").replace(",", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is out of range: use a whole number from {low:,} to {high:,}")
        return value

    return parse


positive_int = whole_in(1, 10**12)
"""argparse type: a whole number of 1 or more (to a trillion), with a readable error."""


def fraction(low: float, high: float) -> Callable[[str], float]:
    """argparse type: a fraction written ``0.05`` or ``5%``, from ``low`` to ``high``."""

    def parse(text: str) -> float:
        percent = text.strip().endswith("%")
        value = _number(text.strip().removesuffix("%"), "a fraction (0.05) or a percentage (5%)")
        value = value / 100 if percent else value
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is out of range: use a fraction from {low:g} to {high:g}")
        return value

    return parse


_min_time = number_in(0, 60, what="a number of seconds")
_cell_timeout = number_in(0, 7 * 24 * 3600, what="a number of seconds", low_open=True)


def add_format_argument(parser: argparse._ActionsContainer) -> None:
    """``--format``: one of the registered report formats, listed from the registry."""
    from stratabench.report.formats import REPORTERS

    parser.add_argument("--format", default="terminal",
                        help=f"report format: {', '.join(REPORTERS.names)} (default terminal)")


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """The output group of a measuring command: ``-o/--output``, ``--overwrite``, ``--format``, ``-q``."""
    output = parser.add_argument_group("output")
    output.add_argument("-o", "--output", metavar="FILE", type=file_name,
                        help="results file (default: results/RUN_ID.jsonl); an existing file is refused; "
                        "a name ending in / is a directory, and the file RUN_ID.jsonl is written in it")
    output.add_argument("--overwrite", action="store_true", help="replace an existing results file")
    add_format_argument(output)
    output.add_argument("-q", "--quiet", action="store_true", help="no progress, only the report")


def add_detail_argument(parser: argparse._ActionsContainer) -> None:
    """``--detail``: how much of the report follows each suite's answer."""
    from stratabench.report.document import DETAILS

    parser.add_argument("--detail", choices=DETAILS, default="tables",
                        help="summary: each suite's answer only; tables (default): and the suite's tables; "
                        "full: and every cell with its loops, spread and status")


#: Presets in the spirit of pyperf's --fast and --rigorous: (target, budget s, min samples, max samples, min-time s).
#: The default's target is what its six rounds can show on a shared machine: a round's thread CPU time moves
#: 3-9% from round to round there, and the interval of six values is their whole range.
#: --allowance's default, for every preset: the share of the rounds' time that rounds beyond the cells' budgets may add.
DEFAULT_ALLOWANCE = EngineOptions.run_allowance

PRESETS: dict[str, tuple[float, float, int, int, float]] = {
    "fast": (0.05, 0.3, 6, 20, 0.05),
    "default": (0.05, 0.3, 6, 40, 0.1),
    "rigorous": (0.01, 6.0, 10, 200, 0.2),
}


def add_engine_arguments(parser: argparse.ArgumentParser, *, samples: int | None = None, warmups: int = 1) -> None:
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
    group.add_argument("--samples", type=whole_in(1, MAX_SAMPLES), default=samples, metavar="N",
                       help="a fixed number of timed samples per cell" + (
                           f" (default {samples})" if samples else
                           " (default: adaptive, until the median's interval, of 95%% or more, is within --target)"))
    group.add_argument("--target", type=_percent, default=None, metavar="PERCENT",
                       help=f"adaptive sampling stops when the median's interval is within this %% of it "
                       f"(default {100 * default[0]:g})")
    group.add_argument("--budget", type=_budget, default=None, metavar="SECONDS",
                       help=f"adaptive sampling time per cell; a cell that misses --target by then is flagged "
                       f"unstable, unless --allowance pays for more rounds that meet it (default {default[1]:g})")
    group.add_argument("--allowance", type=_allowance, default=None, metavar="PERCENT",
                       help="rounds beyond --budget for the cells that miss --target, shared by the run: each such "
                       "cell may get rounds up to the fewest narrower interval (9, 12... rounds, see "
                       "--allowance-rounds) that could meet the target, cheapest first, while they cost at most this "
                       "%% of the time its floor of rounds took (the Python rounds' own time; the slices', for the "
                       f"slices; default {100 * DEFAULT_ALLOWANCE:g}; 0: none)")
    group.add_argument("--allowance-rounds", type=whole_in(1, MAX_SAMPLES), default=EngineOptions.allowance_rounds,
                       metavar="N", help="the most rounds a cell may ask of --allowance at once: the fewest narrower "
                       "count up to N that could meet the target, or its next narrower count if above N (default "
                       f"{EngineOptions.allowance_rounds}; 9: only the next)")
    group.add_argument("--min-samples", type=whole_in(1, MAX_SAMPLES), default=None, metavar="N",
                       help=f"adaptive floor (default {default[2]}: the fewest whose interval reaches 95%%)")
    group.add_argument("--max-samples", type=whole_in(1, MAX_SAMPLES), default=None, metavar="N",
                       help=f"adaptive cap (default {default[3]})")
    group.add_argument("--warmups", type=whole_in(0, MAX_SAMPLES), default=warmups, metavar="N",
                       help=f"untimed warm-up loops before the samples (default {warmups})")
    group.add_argument("--min-time", type=_min_time, default=None, metavar="SECONDS",
                       help=f"calibrate loops so each sample lasts at least this long (default {default[4]:g})")
    group.add_argument("--memory-samples", type=whole_in(0, MAX_SAMPLES), default=1, metavar="N",
                       help="operations traced for alloc/retained bytes, in a separate pass (default 1; 0 skips)")
    group.add_argument("--in-process", action="store_true",
                       help="measure every cell in this process instead of a fresh worker process each")
    group.add_argument("--spawn", action="store_true",
                       help="start a new interpreter for each cell's worker instead of forking it from a "
                       "zygote that imported the plugins once (slower; the same isolation)")
    group.add_argument("--no-retake", dest="retake", action="store_false",
                       help="take every round's sample once, without the machine probe around it that retakes a "
                       "sample the machine slowed (see the engine's probe)")
    group.add_argument("--count", choices=["instructions"], default=None,
                       help="instructions: count each Python cell's instructions (and estimated cycles) per "
                       "operation under Valgrind's callgrind instead of timing it; exact, so unmoved by a busy "
                       "machine, but blind to I/O, servers, sleeps and Go cells (needs valgrind)")
    group.add_argument("--cell-timeout", type=_cell_timeout, default=900.0, metavar="SECONDS",
                       help="fail a cell whose worker runs longer than this (default 900)")


def percentage(number: Callable[[str], float]) -> Callable[[str], float]:
    """argparse type: a percentage, ``2`` or ``2%``, checked by ``number`` and returned as a fraction."""

    def parse(text: str) -> float:
        return number(text.strip().removesuffix("%")) / 100

    return parse


#: --target: a percentage above 0 and below 100 (argparse names the flag).
_percent = percentage(number_in(0, 100, what="a percentage", low_open=True))
#: --allowance: a percentage from 0 to 100.
_allowance = percentage(number_in(0, 100, what="a percentage"))


#: --budget: seconds of adaptive sampling a cell may spend (up to an hour).
_budget = number_in(0, 3600, what="a number of seconds", low_open=True)


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
        run_allowance=given("allowance", DEFAULT_ALLOWANCE),
        allowance_rounds=getattr(args, "allowance_rounds", EngineOptions.allowance_rounds),
        warmups=args.warmups,
        min_sample_ns=int(given("min_time", min_time) * 1e9),
        memory_samples=args.memory_samples,
        isolate=not args.in_process,
        fork=not args.spawn,
        retake=getattr(args, "retake", True),
        cell_timeout_s=args.cell_timeout,
        count=getattr(args, "count", None),
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
