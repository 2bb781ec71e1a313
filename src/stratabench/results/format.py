"""The results file format: JSON Lines, one header then one record per cell.

Each line is one JSON object with a ``type``:

- ``header``: ``format_version``, ``run_id``, ``started`` (ISO 8601 UTC),
  ``environment`` (machine, CPU, Python, packages, Go, git revision),
  ``options`` (the run's options), ``services`` (local servers' URLs,
  passwords removed).
- ``cell``: the fields of :class:`~stratabench.results.records.CellResult`;
  each metric as ``{"samples": [...], "summary": {...}}``; ``flags``, why
  the cell is unstable (empty when it is not); ``judged``, the metric its
  interval, flag and verdicts use (absent or null: ``wall_ns``).
- ``round`` (one per round, as it ends): ``number``, ``order`` (the cell
  names in the order measured), ``reference_ns`` (the fixed reference
  workload's time in that round: the machine's speed then), ``at_s``
  (seconds since the first round began), ``seed`` (of every round's order).
- ``trailer`` (last, optional): ``finished`` and ``environment`` facts known
  only at the end (``load_average_end``); a reader merges them into the
  header's environment.

Records are appended as each cell finishes, so a crash or an interrupt
keeps every finished cell; a file may therefore end without a trailer.

History of ``FORMAT_VERSION`` (one line per change; a reader upgrades older
files step by step with ``upgrade_to_N``):

1. First version.
2. Cell records carry ``flags`` (unstable cells); the environment has
   ``load_average_start`` and ``cpu_governor``, and a ``trailer`` record
   ``load_average_end``. Upgrade: no flags, the rest unknown.
3. Rounds: each metric has ``rounds`` (the round of each sample) and its
   summary is of the per-round values; cells carry ``group``; ``round``
   records. Upgrade: no rounds, so intervals leave out the run's drift
   (:attr:`ResultsFile.drift_note`). Later, without a version of its own
   (the key is optional and means what its absence meant): cells carry
   ``judged``; and ``probe_ns`` (the machine probe's figure around each kept
   sample) and ``retaken`` (the samples set aside because it read slow:
   ``round``, ``probe_ns``, ``probe_median_ns``, ``values``), both absent or
   empty when the run did not probe.
"""

from __future__ import annotations

import io
import json
import statistics
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stratabench.datasets.verify import Integrity
from stratabench.errors import ResultsFormatError, StratabenchError
from stratabench.input_file import read_input_file
from stratabench.json_lines import BadLine, json_objects
from stratabench.metrics import METRICS
from stratabench.options import RunOptions
from stratabench.redact import redact
from stratabench.results.records import CellResult, MetricResult, Retake
from stratabench.results.stats import Summary

__all__ = ["FORMAT_VERSION", "MAX_RESULTS_BYTES", "ResultsFile", "cell_to_json", "header_record", "load", "parse_lines", "round_record",
           "trailer_record"]

FORMAT_VERSION = 3


def upgrade_to_2(record: dict[str, Any]) -> dict[str, Any]:
    """Version 1 had no instability flags: a cell record gets none (its samples are there to judge)."""
    if record.get("type") == "cell":
        return {**record, "flags": list(record.get("flags", []))}
    return record


def upgrade_to_3(record: dict[str, Any]) -> dict[str, Any]:
    """Version 2 had no rounds: every sample of a cell came from one window, so its metrics get no ``rounds``."""
    if record.get("type") == "cell":
        return {**record, "group": None,
                "metrics": {name: {**m, "rounds": None} for name, m in (record.get("metrics") or {}).items()}}
    return record


#: upgrade_to_N turns a version N-1 record into a version N record.
UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {2: upgrade_to_2, 3: upgrade_to_3}


@dataclass(frozen=True)
class ResultsFile:
    """A loaded results file: its header and its cell results, in file order.

    ``warnings`` holds one line per thing the reader skipped (a truncated or
    corrupt tail); the CLI prints them. ``rounds`` holds the run's round
    records (empty before format 3); ``format_version`` is the version the
    file was written in, before any upgrade.
    """

    header: dict[str, Any]
    cells: list[CellResult]
    warnings: tuple[str, ...] = ()
    rounds: tuple[dict[str, Any], ...] = ()
    format_version: int = FORMAT_VERSION

    @property
    def probe_level(self) -> tuple[float, int] | None:
        """The median of every machine-probe figure the run's workers took around their kept samples, and how many.

        The probe (:mod:`stratabench.engine.probe`) is one fixed loop timed
        beside every Python sample, so its median is the machine's speed over
        the whole run: two runs' levels say how far the machine moved between
        them, which no interval of one run can hold. ``None`` without probes
        (``--no-retake``, Go-only runs, files before format 3).
        """
        figures = [figure for cell in self.cells for figure in cell.probe_ns]
        return (statistics.median(figures), len(figures)) if figures else None

    @property
    def drift_note(self) -> str | None:
        """One line for a file measured before rounds, whose intervals cannot include the run's drift; else ``None``."""
        if self.format_version >= 3:
            return None
        return (f"format {self.format_version} (before rounds): each cell's samples come from one moment of its run, "
                "so its intervals do not include the run's drift")


class _Unreadable(Exception):
    """A line that is not JSON: where a corrupt or truncated file stops being read."""

    def __init__(self, number: int, reason: str) -> None:
        super().__init__(reason)
        self.number, self.reason = number, reason


_SCALARS = (str, int, float, bool, type(None))
_STATUSES = ("ok", "failed", "unavailable", "unsupported")
_SUMMARY_FIELDS = {"n": int, "median": float, "min": float, "max": float, "mean": float, "stdev": float,
                   "ci_low": float, "ci_high": float, "ci_level": float}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _shape_problem(record: dict[str, Any]) -> str | None:
    """What is wrong with a cell record's shape, or ``None``; checked before any field is used."""
    for name in ("suite", "cell", "status"):
        if not isinstance(record.get(name), str):
            return f"{name!r} must be a string"
    if record["status"] not in _STATUSES:
        return f"status {record['status']!r} is not one of {', '.join(_STATUSES)}"
    for name, kind in (("language", str), ("error", str)):
        if name in record and record[name] is not None and not isinstance(record[name], kind):
            return f"{name!r} must be a string"
    params = record.get("params", {})
    if not isinstance(params, dict) or not all(isinstance(v, _SCALARS) for v in params.values()):
        return "'params' must be an object of plain values (strings, numbers, booleans, null)"
    for name in ("group", "judged"):
        if record.get(name) is not None and not isinstance(record[name], str):
            return f"{name!r} must be a string or null"
    if record.get("judged") is not None and record["judged"] not in METRICS:
        return f"'judged' names no metric: {record['judged']!r}"
    if not isinstance(record.get("notes", {}), dict):
        return "'notes' must be an object"
    for name in ("loops", "duration_s"):
        if record.get(name) is not None and not _number(record[name]):
            return f"{name!r} must be a number"
    if not _is_numbers(record.get("probe_ns", [])):
        return "'probe_ns' must be a list of numbers"
    retaken = record.get("retaken", [])
    if not (isinstance(retaken, list) and all(_retake_fits(item) for item in retaken)):
        return ("'retaken' must be a list of objects with 'round' (a whole number or null), 'probe_ns', "
                "'probe_median_ns' (numbers) and 'values' (metric name to number)")
    integrity = record.get("integrity")
    if integrity is not None and not (isinstance(integrity, dict) and {"expected", "actual"} <= set(integrity)):
        return "'integrity' must be an object with 'expected' and 'actual'"
    metrics = record.get("metrics", {})
    if not isinstance(metrics, dict):
        return "'metrics' must be an object of metric name to samples and summary"
    for name, measured in metrics.items():
        if not (isinstance(measured, dict) and isinstance(measured.get("samples"), list)
                and isinstance(measured.get("summary"), dict)):
            return f"metric {name!r} must be an object with a 'samples' list and a 'summary' object"
        if not measured["samples"] or not all(_number(v) for v in measured["samples"]):
            return f"metric {name!r}: 'samples' must be a non-empty list of numbers"
        rounds = measured.get("rounds")
        if rounds is not None and not (isinstance(rounds, list) and len(rounds) == len(measured["samples"])
                                       and all(isinstance(r, int) and not isinstance(r, bool) for r in rounds)):
            return f"metric {name!r}: 'rounds' must be null or a list of integers, one per sample"
        summary = measured["summary"]
        if set(summary) != set(_SUMMARY_FIELDS):
            return f"metric {name!r}: 'summary' must have exactly {', '.join(_SUMMARY_FIELDS)}"
        for field, value in summary.items():
            if not (_number(value) or (field == "stdev" and value is None)):
                return f"metric {name!r}: summary {field!r} must be a number"
    return None


def _is_numbers(value: Any) -> bool:
    return isinstance(value, list) and all(_number(v) for v in value)


def _retake_fits(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    round_ = item.get("round")
    values = item.get("values")
    return ((round_ is None or (isinstance(round_, int) and not isinstance(round_, bool)))
            and _number(item.get("probe_ns")) and _number(item.get("probe_median_ns"))
            and isinstance(values, dict) and all(name in METRICS and _number(v) for name, v in values.items()))


#: The environment's fields that reports read as more than text, with the shape they need and its name.
_ENVIRONMENT_SHAPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "python": (lambda v: isinstance(v, dict) and all(isinstance(x, (str, type(None))) for x in v.values()),
               "an object of strings"),
    "packages": (lambda v: isinstance(v, dict) and all(isinstance(x, (str, type(None))) for x in v.values()),
                 "an object of version strings"),
    "cpu_count": (_number, "a number"),
    "memory_bytes": (_number, "a number"),
    "load_average_start": (_is_numbers, "a list of numbers"),
    "load_average_end": (_is_numbers, "a list of numbers"),
}


def _environment_problem(environment: Any) -> str | None:
    if not isinstance(environment, dict):
        return f"'environment' must be an object, not {type(environment).__name__}"
    for name, (fits, shape) in _ENVIRONMENT_SHAPES.items():
        if environment.get(name) is not None and not fits(environment[name]):
            return f"environment {name!r} must be {shape} or null"
    return None


def _header_problem(record: dict[str, Any]) -> str | None:
    """What is wrong with a header record's shape, or ``None``; reports read it without further checks."""
    for name in ("run_id", "started"):
        if record.get(name) is not None and not isinstance(record[name], str):
            return f"{name!r} must be a string"
    for name in ("options", "services"):
        if not isinstance(record.get(name, {}), dict):
            return f"{name!r} must be an object, not {type(record[name]).__name__}"
    try:
        RunOptions.from_json(record.get("options") or {})
    except ValueError as error:
        return str(error)
    return _environment_problem(record.get("environment", {}))


def _trailer_problem(record: dict[str, Any]) -> str | None:
    if record.get("finished") is not None and not isinstance(record["finished"], str):
        return "'finished' must be a string"
    return _environment_problem(record.get("environment") or {})


def _round_problem(record: dict[str, Any]) -> str | None:
    if not (isinstance(record.get("number"), int) and not isinstance(record["number"], bool)):
        return "'number' must be a whole number"
    if not (isinstance(record.get("order"), list) and all(isinstance(name, str) for name in record["order"])):
        return "'order' must be a list of cell names"
    for name in ("reference_ns", "at_s"):
        if record.get(name) is not None and not _number(record[name]):
            return f"{name!r} must be a number or null"
    return None


def header_record(run_id: str, started: str, environment: dict[str, Any], options: dict[str, Any],
                  services: dict[str, Any] | None = None) -> dict[str, Any]:
    """The header line of a results file.

    Store URLs in ``options`` are written with their passwords masked: the
    file is an output, and outputs never carry a password.
    """
    options = dict(options)
    if options.get("stores"):
        options["stores"] = [redact(url) for url in options["stores"]]
    return {
        "type": "header",
        "format_version": FORMAT_VERSION,
        "run_id": run_id,
        "started": started,
        "environment": environment,
        "options": options,
        "services": services or {},
    }


def trailer_record(finished: str, environment: dict[str, Any]) -> dict[str, Any]:
    """The last line of a finished run: what is known only at its end (``load_average_end``)."""
    return {"type": "trailer", "finished": finished, "environment": environment}


def round_record(number: int, order: list[str], reference_ns: float | None, at_s: float, seed: int) -> dict[str, Any]:
    """The record of one finished round: its cells' order, the reference workload's time, when it ended, the seed."""
    return {"type": "round", "number": number, "order": order, "reference_ns": reference_ns, "at_s": at_s,
            "seed": seed}


def cell_to_json(result: CellResult) -> dict[str, Any]:
    """One cell record, ready for ``json.dumps``."""
    integrity = result.integrity
    record: dict[str, Any] = {
        "type": "cell",
        "suite": result.suite,
        "cell": result.cell,
        "params": dict(result.params),
        "language": result.language,
        "status": result.status,
        "error": result.error,
        "loops": result.loops,
        "metrics": {
            name: {"samples": list(m.samples), "rounds": None if m.rounds is None else list(m.rounds),
                   "summary": m.summary.to_json()}
            for name, m in result.metrics.items()
        },
        "integrity": None
        if integrity is None
        else {"expected": integrity.expected, "actual": integrity.actual, "detail": integrity.detail, "ok": integrity.ok},
        "notes": dict(result.notes),
        "duration_s": result.duration_s,
        "flags": list(result.flags),
        "group": result.group,
        "judged": result.judged,
    }
    # Only a probed run writes them, so a file of a run without the probe reads as it did before it.
    if result.probe_ns:
        record["probe_ns"] = list(result.probe_ns)
    if result.retaken:
        record["retaken"] = [{"round": retake.round, "probe_ns": retake.probe_ns,
                              "probe_median_ns": retake.probe_median_ns, "values": dict(retake.values)}
                             for retake in result.retaken]
    return record


def cell_from_json(record: dict[str, Any]) -> CellResult:
    integrity = record.get("integrity")
    return CellResult(
        suite=record["suite"],
        cell=record["cell"],
        params=record.get("params", {}),
        language=record.get("language", "python"),
        status=record["status"],
        error=record.get("error"),
        loops=record.get("loops"),
        metrics={
            name: MetricResult(tuple(m["samples"]), Summary.from_json(m["summary"]),
                               None if m.get("rounds") is None else tuple(m["rounds"]))
            for name, m in record.get("metrics", {}).items()
        },
        integrity=None
        if integrity is None
        else Integrity(integrity["expected"], integrity["actual"], integrity.get("detail")),
        notes=record.get("notes", {}),
        duration_s=record.get("duration_s"),
        flags=tuple(record.get("flags", ())),
        group=record.get("group"),
        judged=record.get("judged"),
        probe_ns=tuple(record.get("probe_ns", ())),
        retaken=tuple(Retake(item.get("round"), item["probe_ns"], item["probe_median_ns"], item["values"])
                      for item in record.get("retaken", ())),
    )


def _upgrade(record: dict[str, Any], version: int) -> dict[str, Any]:
    for step in range(version + 1, FORMAT_VERSION + 1):
        record = UPGRADES[step](record)
    return record


def parse_lines(lines: Iterator[str], source: str) -> ResultsFile:
    """Parse the lines of a results file; ``source`` names it in errors.

    A line that is not JSON ends the reading: a killed run leaves at most a
    truncated last line, so the records before it are kept and the file
    carries a one-line warning. A record that is JSON of the wrong shape is
    an error naming its line: that file was not written by stratabench.

    Raises
    ------
    ResultsFormatError
        Naming the file and line, for a bad header, an unknown format
        version, or a record of the wrong shape.
    """
    header: dict[str, Any] | None = None
    cells: list[CellResult] = []
    rounds: list[dict[str, Any]] = []
    version: int = FORMAT_VERSION

    def bad_line(line: BadLine) -> Exception:
        if line.error is not None:
            reason = line.error.msg if isinstance(line.error, json.JSONDecodeError) else str(line.error)
            return _Unreadable(line.number, reason)
        return ResultsFormatError(f"{source}, line {line.number}: expected a JSON object, "
                                  f"got {type(line.value).__name__}")

    try:
        for number, record in json_objects(lines, bad_line):
            where = f"{source}, line {number}"
            kind = record.get("type")
            if header is None:
                if kind != "header":
                    raise ResultsFormatError(f"{where}: the first record must be the header; "
                                             "is this a stratabench results file?")
                version = _version(record.get("format_version"), where)
                problem = _header_problem(record)
                if problem is not None:
                    raise ResultsFormatError(f"{where}: malformed header: {problem}")
                header = _upgrade(record, version)
                continue
            if kind == "trailer":  # the run's end: facts known only then, such as the load average
                problem = _trailer_problem(record)
                if problem is not None:
                    raise ResultsFormatError(f"{where}: malformed trailer: {problem}")
                header.setdefault("environment", {}).update(record.get("environment") or {})
                header["finished"] = record.get("finished")
                continue
            if kind == "round":
                problem = _round_problem(record)
                if problem is not None:
                    raise ResultsFormatError(f"{where}: malformed round record: {problem}")
                rounds.append(record)
                continue
            if kind != "cell":
                raise ResultsFormatError(f"{where}: unknown record type {kind!r}")
            problem = _shape_problem(record)
            if problem is not None:
                raise ResultsFormatError(f"{where}: malformed cell record: {problem}")
            try:
                cells.append(cell_from_json(_upgrade(record, version)))
            except (KeyError, TypeError, ValueError, StratabenchError) as error:
                raise ResultsFormatError(f"{where}: malformed cell record ({type(error).__name__}: {error})") from None
    except _Unreadable as stop:
        where = f"{source}, line {stop.number}"
        if header is None:
            raise ResultsFormatError(f"{where}: not JSON ({stop.reason}); is this a stratabench results file?") from None
        warning = (f"{where}: not JSON ({stop.reason}); the file is corrupt or truncated there, "
                   f"so only the {len(cells)} cells before it are read")
        return ResultsFile(header, cells, (warning,), tuple(rounds), version)
    if header is None:
        raise ResultsFormatError(f"{source}: empty file, no header record")
    return ResultsFile(header, cells, (), tuple(rounds), version)


def _version(found: Any, where: str) -> int:
    """The header's format version, when this stratabench reads it."""
    if isinstance(found, int) and not isinstance(found, bool) and 1 <= found <= FORMAT_VERSION:
        return found
    if isinstance(found, int) and not isinstance(found, bool) and found > FORMAT_VERSION:
        raise ResultsFormatError(f"{where}: format version {found} is newer than this stratabench reads "
                                 f"(1 to {FORMAT_VERSION}); upgrade stratabench")
    raise ResultsFormatError(f"{where}: format version {found!r} is not one this stratabench reads "
                             f"(1 to {FORMAT_VERSION}); it has no upgrade path, so measure again")


#: The largest results file read: a run of a few hundred cells writes a few MB, raw samples included.
MAX_RESULTS_BYTES = 256_000_000


def load(path: str | Path) -> ResultsFile:
    """Load a results file, upgrading older format versions.

    Raises
    ------
    ResultsFormatError
        For a missing, unreadable, special (FIFO, device, directory), too
        large (over :data:`MAX_RESULTS_BYTES`) or malformed file.
    """
    if not str(path).strip():
        raise ResultsFormatError("a results file name is empty; give the path of a results file")
    data = read_input_file(path, limit=MAX_RESULTS_BYTES, what="a results file written by stratabench run",
                           error=ResultsFormatError)
    try:
        # Read as the file itself would be: lines end at a newline only (not at U+2028 and its kind).
        return parse_lines(iter(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")), str(path))
    except UnicodeDecodeError:
        raise ResultsFormatError(f"{path}: not a text file; is this a stratabench results file?") from None
