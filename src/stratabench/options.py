"""Typed, frozen options: what the CLI builds from arguments.

The command line ends at the CLI. Everything below it (engine, suites,
reporters) receives these objects, never an argparse namespace, and they
cross into worker processes as JSON (:meth:`RunOptions.to_json`).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from stratabench.errors import UsageError

__all__ = ["EngineOptions", "RunOptions"]


@dataclass(frozen=True)
class EngineOptions:
    """How the engine measures each cell.

    A run measures in rounds (:mod:`stratabench.engine.rounds`): each round
    gives every cell still sampling a fresh worker that takes
    ``round_samples`` samples, and a cell's value in a round is their
    median. By default sampling is adaptive, counted in rounds: each cell
    takes at least ``min_samples`` rounds (enough for its median's interval
    to reach 95%), then more until the interval's half-width is within
    ``target`` of the median, ``cell_budget_ns`` of sampling is spent or
    ``max_samples`` rounds are taken; a cell whose budget is spent while it
    misses the target may get more rounds from the run's allowance
    (``run_allowance``). ``samples`` fixes the count instead: that many
    rounds of one sample.

    Attributes
    ----------
    samples
        A fixed number of timed samples per cell (``--samples``), one per
        round, or ``None`` for adaptive sampling.
    min_samples
        The floor of adaptive sampling, in rounds: six reach a 95% interval of the median.
    max_samples
        The cap of adaptive sampling, in rounds.
    round_samples
        Timed samples a cell takes in each round of adaptive sampling. One
        by default: a round's samples share its moment of the machine, so a
        second one tells little about the spread that matters (between
        rounds), and after the warm-up it was a third of every round's
        sampling time.
    round_seed
        Seeds the order of every round; ``None`` draws one (the results
        file records it either way).
    target
        The relative half-width of the median's interval at which adaptive
        sampling stops (0.05: median ± 5%; six rounds' interval is their whole
        range, and a round's thread CPU time moves 3-9% on a shared 2-core
        machine).
    cell_budget_ns
        Adaptive sampling stops after the cell's samples took this long in
        total (in a run: after its rounds took this long, each worker's
        start and preparation included); a cell that had not reached
        ``target`` by then is flagged. Samples (rounds) the budget cannot
        carry to the next count whose interval is narrower (9, 12, 15...)
        are not taken, unless the run's allowance pays for them.
    run_allowance
        The rounds beyond the cells' budgets, shared by the run: a cell
        that misses ``target`` when its budget is spent is given rounds up
        to the fewest narrower count (9, 12, 15...) up to
        ``allowance_rounds`` that could meet the target, cheapest first, while the rounds granted cost at
        most this share of the rounds' time until the first ask, the floor
        (the Python rounds' own time, not the slices between them; 0.1: about a tenth more time; 0: none). See :class:`~stratabench.engine.sampling.Allowance`.
    allowance_rounds
        The most rounds a cell may ask of the allowance at once: it asks for
        the fewest narrower count up to this (9, 12) that could meet the
        target, or for its next narrower count if that is above it (9 or
        less: only the next, as before this option).
    warmups
        Untimed loops run before the samples, at the calibrated loop count
        (in a later round of a run, a third of it: the first round's
        calibration already warmed that count up once).
    min_sample_ns
        Calibration target: each sample lasts at least this long, so the
        clock's resolution and the loop's own cost are negligible. Slower
        operations run once per sample.
    max_sample_ns
        Never sample a cell for longer than this in total, even below the
        floor (at least three samples are always taken): bulkload's embed
        compile, a load of about 3 s, takes three samples rather than six
        (three flag it: their interval's level is only 75%).
    memory_samples
        Operations measured in the tracemalloc pass (0 disables the pass).
    isolate
        Run each cell in a fresh worker process (the default); ``False``
        runs in this process, which is faster but lets cells share caches.
    fork
        Fork each cell's worker from a zygote process that has imported the
        engine and the plugins once (the default), instead of starting a
        new interpreter per cell.
    retake
        Time a short machine probe around every sample of a run's rounds and
        retake a sample the probe says the machine slowed
        (:mod:`stratabench.engine.probe`; the default); ``False``
        (``--no-retake``) keeps every first sample, unprobed.
    cell_timeout_s
        A worker that takes longer is killed and its cell reported failed.
    count
        ``"instructions"``: count each Python cell's instructions under
        Valgrind's callgrind instead of timing it
        (:mod:`stratabench.engine.counting`); ``None`` times it.
    """

    samples: int | None = None
    min_samples: int = 6
    max_samples: int = 40
    round_samples: int = 1
    round_seed: int | None = None
    target: float = 0.05
    cell_budget_ns: int = 300_000_000
    run_allowance: float = 0.1
    allowance_rounds: int = 12
    warmups: int = 1
    min_sample_ns: int = 100_000_000
    max_sample_ns: int = 8_000_000_000
    memory_samples: int = 1
    isolate: bool = True
    fork: bool = True
    retake: bool = True
    cell_timeout_s: float = 900.0
    count: Literal["instructions"] | None = None

    def __post_init__(self) -> None:
        if self.samples is not None and self.samples < 1:
            raise UsageError(f"--samples must be at least 1, not {self.samples}")
        if self.min_samples < 1:
            raise UsageError(f"--min-samples must be at least 1, not {self.min_samples}")
        if self.round_samples < 1:
            raise UsageError(f"--round-samples must be at least 1, not {self.round_samples}")
        if self.max_samples < self.min_samples:
            raise UsageError(f"--max-samples ({self.max_samples}) must be at least --min-samples ({self.min_samples})")
        if not 0 < self.target < 1:
            raise UsageError(f"--target must be a percentage above 0 and below 100, not {100 * self.target:g}")
        if self.cell_budget_ns < 0:
            raise UsageError("--budget must not be negative")
        if not 0 <= self.run_allowance <= 1:
            raise UsageError(f"--allowance must be a percentage from 0 to 100, not {100 * self.run_allowance:g}")
        if self.allowance_rounds < 1:
            raise UsageError(f"--allowance-rounds must be at least 1, not {self.allowance_rounds}")
        if self.warmups < 0:
            raise UsageError(f"--warmups must be 0 or more, not {self.warmups}")
        if self.min_sample_ns < 0:
            raise UsageError("--min-time must not be negative")
        if self.memory_samples < 0:
            raise UsageError(f"--memory-samples must be 0 or more, not {self.memory_samples}")

    @property
    def adaptive(self) -> bool:
        """Whether the sample count follows the stopping rule rather than ``--samples``."""
        return self.samples is None

    @property
    def least_samples(self) -> int:
        """The samples a cell takes at the least: the fixed count, or the adaptive floor."""
        return self.min_samples if self.samples is None else self.samples


@dataclass(frozen=True)
class RunOptions:
    """What to run and on what.

    Attributes
    ----------
    suites
        Suite names; empty means every suite that runs by default.
    size
        Dataset size override (records); ``None`` keeps each suite's default.
    seed
        Dataset seed; the studies' reference data uses each suite's default.
    codecs, compressors, mappers
        Restrict the matrix to these plugin names; empty keeps the defaults.
    stores
        Store URLs to add to the embedded defaults (``redis://127.0.0.1:6379/0``).
    data
        A user's records file (JSON Lines or CSV) for the matrix suite.
    settings
        Namespaced plugin settings, ``sqlite.journal_mode`` → ``"wal"``; each
        plugin declares its own with their defaults and reads them through
        :class:`stratabench.settings.SettingReader`.
    run_id
        Identifies the run; prefixes every key and table a store writes.
    engine
        How each cell is measured.
    rebuild
        Build the Go programs and assets anew instead of reusing the build
        cache (:mod:`stratabench.build_cache`).
    full
        Run each suite's reference grid (the sizes and tries of the study it
        reproduces) instead of its everyday default; only suites that
        declare one (:attr:`~stratabench.suites.kit.suite.Suite.full_grid`) accept it.
    """

    suites: tuple[str, ...] = ()
    size: int | None = None
    seed: int | None = None
    codecs: tuple[str, ...] = ()
    compressors: tuple[str, ...] = ()
    mappers: tuple[str, ...] = ()
    stores: tuple[str, ...] = ()
    data: str | None = None
    settings: Mapping[str, str] = field(default_factory=dict)
    run_id: str = "local"
    engine: EngineOptions = field(default_factory=EngineOptions)
    rebuild: bool = False
    full: bool = False

    def __post_init__(self) -> None:
        if self.size is not None and self.size < 1:
            raise UsageError(f"--size must be a positive number of records, not {self.size}")

    def with_engine(self, **changes: Any) -> RunOptions:
        """A copy with some engine options changed."""
        return replace(self, engine=replace(self.engine, **changes))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["settings"] = dict(self.settings)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunOptions:
        """Options back from :meth:`to_json`, as a worker or a results file's header carries them.

        Raises
        ------
        ValueError
            Naming the first field that is unknown or of the wrong type (a
            results file edited by hand, or not written by stratabench).
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"options must be an object, not {type(data).__name__}")
        values = _typed(cls, data)
        engine = values.get("engine", {})
        if not isinstance(engine, Mapping):
            raise ValueError(f"options 'engine' must be an object, not {type(engine).__name__}")
        try:
            values["engine"] = EngineOptions(**_typed(EngineOptions, engine))
            return cls(**values)
        except UsageError as error:  # the value's own check, worded for the flag that sets it
            raise ValueError(f"options: {error}") from None


def _fits(value: Any, kind: Any) -> bool:
    """Whether a JSON value fits a field's declared type (the few shapes the option classes use)."""
    origin, arguments = get_origin(kind), get_args(kind)
    if origin in (Union, UnionType):
        return any(_fits(value, argument) for argument in arguments)
    if kind is type(None):
        return value is None
    if origin is Literal:
        return value in arguments
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if kind is str:
        return isinstance(value, str)
    if origin is tuple:
        return isinstance(value, (list, tuple)) and all(_fits(item, arguments[0]) for item in value)
    if origin in (Mapping, dict):
        return isinstance(value, Mapping) and all(_fits(k, arguments[0]) and _fits(v, arguments[1])
                                                  for k, v in value.items())
    return isinstance(value, Mapping)  # a nested option class, checked on its own


def _kind_name(kind: Any) -> str:
    """A field's type in words, for a message about a value that does not fit it."""
    if get_origin(kind) in (Union, UnionType):
        return " or ".join(_kind_name(argument) for argument in get_args(kind))
    if get_origin(kind) is Literal:
        return " or ".join(json.dumps(argument) for argument in get_args(kind))
    words = {type(None): "null", bool: "true or false", int: "a whole number", float: "a finite number",
             str: "a string", tuple: "a list of strings"}
    return words.get(kind, words.get(get_origin(kind), "an object"))


@functools.cache
def _field_types(cls: type) -> dict[str, Any]:
    """The declared type of each of ``cls``'s fields, resolved once a process (read-only for every caller).

    Resolving them (``get_type_hints``) took about 0.8 ms, paid by every
    worker reading its request; resolved at import (below), a zygote's
    workers start with them.
    """
    return get_type_hints(cls)


def _typed(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` checked against ``cls``'s fields, lists made tuples; a ``ValueError`` names a misfit."""
    hints = _field_types(cls)
    values = dict(data)
    for name, value in values.items():
        if name not in hints:
            raise ValueError(f"options: unknown field {name!r}")
        if not _fits(value, hints[name]):
            raise ValueError(f"options {name!r}: {json.dumps(value)[:40]} is not {_kind_name(hints[name])}")
        if isinstance(value, list):
            values[name] = tuple(value)
    return values


# Resolved at import, so the zygote (which imports this module) hands them to every worker it forks.
_field_types(EngineOptions)
_field_types(RunOptions)
