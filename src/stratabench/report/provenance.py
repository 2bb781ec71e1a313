"""Where and when a run was measured: the facts every report format shows first.

The results header records the environment (:mod:`stratabench.results.environment`);
:func:`provenance` turns it into labelled lines a reader can check at a glance:
the machine, its load at the start and end of the run, the CPU frequency
governor where the system exposes it, the interpreters and packages, the
source revision and the date. Facts a header does not have are left out, so
older results files still render.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from stratabench.report.table import Column, Table
from stratabench.results.records import WALL_METRIC, CellResult
from stratabench.units import format_bytes

__all__ = ["probe_ratios", "provenance", "provenance_table", "reference_ratios", "retakes"]

#: The layer packages worth naming in one line; every version stays in the results file.
_KEY_PACKAGES = ("stratabench", "orjson", "msgspec", "msgpack", "cbor2", "protobuf", "zstandard", "lz4", "lmdb",
                 "redis", "pymemcache", "psycopg", "pymysql", "pymongo", "google-cloud-ndb")


def _first(sources: Sequence[Mapping[str, Any]], *names: str) -> Any:
    for source in sources:
        for name in names:
            if source.get(name) not in (None, "", [], {}):
                return source[name]
    return None


def _load(value: Any) -> str | None:
    """``0.52 0.61 0.70`` from a list of three, or one number, or a mapping of the three windows."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        value = [value[key] for key in ("1m", "5m", "15m", "1", "5", "15") if key in value] or list(value.values())
    if isinstance(value, (list, tuple)):
        return " ".join(_number(v) for v in value)
    return _number(value)


def _number(value: Any) -> str:
    # A header written by another tool (or damaged) may hold anything here: the provenance shows it as it is
    # rather than failing the whole report over one line of context.
    try:
        return f"{float(value):.2f}"
    except (TypeError, ValueError, OverflowError):
        return str(value)


def reference_ratios(env: Mapping[str, Any]) -> list[tuple[float, float]]:
    """(seconds into the run, the reference workload's time over its median) per round; empty without rounds."""
    times, at = env.get("reference_ns"), env.get("reference_at_s")
    if not isinstance(times, list) or not isinstance(at, list) or len(times) != len(at):
        return []
    pairs = [(float(second), float(value)) for second, value in zip(at, times) if value]
    if not pairs:
        return []
    values = sorted(value for _, value in pairs)
    middle = len(values) // 2
    median = values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2
    return [(second, value / median) for second, value in pairs]


def _probes_by_round(results: Iterable[CellResult]) -> dict[int, list[float]]:
    """Round number → the machine probe's figures beside the samples taken in it."""
    by_round: dict[int, list[float]] = {}
    for result in results:
        timed = result.metrics.get(WALL_METRIC)
        # The probes follow the timed samples one for one; a cell whose counts differ (a file from elsewhere) is
        # left out rather than guessed at.
        if timed is None or timed.rounds is None or len(timed.rounds) != len(result.probe_ns):
            continue
        for number, figure in zip(timed.rounds, result.probe_ns):
            by_round.setdefault(number, []).append(figure)
    return by_round


def probe_ratios(env: Mapping[str, Any], results: Iterable[CellResult]) -> list[tuple[float, float]]:
    """(seconds into the run, the median of the machine probes beside that round's samples over the median of
    every probe) per round; empty without probed samples in rounds or without the rounds' times.

    Every probed sample has the probe (:mod:`stratabench.engine.probe`: the reference workload's loop, shorter)
    timed around it in its own worker, so a round's median of them is the machine's speed as that round's cells
    saw it, over the whole round. The reference workload (:func:`reference_ratios`) is one snapshot of a few
    milliseconds in the run's own process after each round, and a slow spell of the machine (nine in ten
    end within 35 ms) that falls on it moves it: in a default run here it read 0.93-1.62x its median, its
    thread CPU time alike (so no preemption), while each round's probes (about 200 a round) stayed within
    0.96-1.04x.
    """
    at = env.get("reference_at_s")
    if not isinstance(at, list):
        return []
    by_round = _probes_by_round(results)
    figures = [figure for round_figures in by_round.values() for figure in round_figures]
    level = statistics.median(figures) if figures else 0.0
    if level <= 0:
        return []
    return [(float(at[number]), statistics.median(round_figures) / level)
            for number, round_figures in sorted(by_round.items())
            if 0 <= number < len(at) and isinstance(at[number], (int, float))]


def _machine_moves(env: Mapping[str, Any], results: Sequence[CellResult]) -> list[tuple[str, str]]:
    """How much the machine's speed moved during the run, and what the scheduler says took the CPU away."""
    facts = []
    ratios = reference_ratios(env)
    reference = (f"{min(r for _, r in ratios):.2f}–{max(r for _, r in ratios):.2f}× its median over {len(ratios)} "
                 "rounds") if ratios else ""
    probes = probe_ratios(env, results)
    if probes:
        low, high = min(r for _, r in probes), max(r for _, r in probes)
        count = sum(len(figures) for figures in _probes_by_round(results).values())
        facts.append(("machine speed", f"each round's median of the machine probe timed beside its samples ranged "
                      f"{low:.2f}–{high:.2f}× the run's over {len(probes)} rounds ({count:,} probes; above 1: "
                      "slower)" + (f"; the reference workload, one snapshot of a few ms after each round, which a "
                                   f"short slow spell of the machine can fall on, ranged {reference}"
                                   if ratios else "")))
    elif ratios:
        facts.append(("machine speed", f"the reference workload ranged {reference} (a fixed pure-Python loop timed "
                      "after each round; above 1: slower)"))
    steal_start, steal_end = env.get("steal_s_start"), env.get("steal_s_end")
    wait_start, wait_end = env.get("run_queue_wait_s_start"), env.get("run_queue_wait_s_end")
    parts = []
    if isinstance(steal_start, (int, float)) and isinstance(steal_end, (int, float)):
        parts.append(f"steal {steal_start:.2f} s at the start, {steal_end:.2f} s at the end "
                     f"(+{steal_end - steal_start:.2f} s during the run, every CPU)")
    if isinstance(wait_start, (int, float)) and isinstance(wait_end, (int, float)):
        parts.append(f"run-queue wait of the run's process +{wait_end - wait_start:.2f} s")
    if parts:
        facts.append(("CPU taken away", "; ".join(parts)))
    return facts


def retakes(results: Iterable[CellResult]) -> tuple[str, str] | None:
    """How many of the run's probed samples were retaken, and why (:mod:`stratabench.engine.probe`); ``None``
    when nothing was probed (a run with ``--no-retake``, or before the probe)."""
    probed = retaken = 0
    ratios: list[float] = []
    for result in results:
        probed += len(result.probe_ns)
        retaken += len({retake.round for retake in result.retaken})
        ratios += [retake.probe_ratio for retake in result.retaken]
    if not probed:
        return None
    why = (f", because a short fixed loop timed just before and after the sample ran {min(ratios):.2f}–"
           f"{max(ratios):.2f}× its median over the run (the machine was slower then); {len(ratios)} samples set "
           "aside, kept in the results file" if ratios else "")
    return "samples retaken", f"{retaken} of {probed} visits{why}"


def provenance(header: Mapping[str, Any], results: Iterable[CellResult] = ()) -> list[tuple[str, str]]:
    """(label, text) facts about the run, in reading order: machine, load, software, revision, date; with the
    results, how many samples the machine probe had retaken."""
    env: Mapping[str, Any] = header.get("environment") or {}
    sources = [header, env]
    facts: list[tuple[str, str]] = []
    started = header.get("started")
    if started:
        facts.append(("date", str(started).replace("T", " ")))
    cpu = env.get("cpu")
    if cpu:
        cores = env.get("cpu_count")
        memory = env.get("memory_bytes")
        facts.append(("machine", ", ".join(part for part in (
            str(cpu), f"{cores} cores" if cores else "", f"{format_bytes(memory)} memory" if memory else "",
            str(env.get("os") or "")) if part)))
    start = _load(_first(sources, "load_average_start", "load_start", "loadavg_start"))
    end = _load(_first(sources, "load_average_end", "load_end", "loadavg_end"))
    either = _first(sources, "load_average", "loadavg")
    if isinstance(either, Mapping) and ("start" in either or "end" in either):
        start, end = start or _load(either.get("start")), end or _load(either.get("end"))
    elif either is not None:
        start = start or _load(either)
    if start or end:
        facts.append(("load average", f"{start or '-'} at the start, {end or '-'} at the end (1, 5, 15 min)"
                      if end else f"{start} at the start (1, 5, 15 min)"))
    cells = list(results)
    facts += _machine_moves(env, cells)
    retaken = retakes(cells)
    if retaken is not None:
        facts.append(retaken)
    governor = _first(sources, "cpu_governor", "governor", "scaling_governor")
    if governor:
        facts.append(("CPU governor", ", ".join(map(str, governor)) if isinstance(governor, list) else str(governor)))
    python = env.get("python") or {}
    software = []
    if python.get("version"):
        software.append(f"{python.get('implementation', 'Python')} {python['version']}")
    go = _first(sources, "go", "go_version")
    if go:
        software.append(str(go) if str(go).startswith("go") else f"Go {go}")
    if env.get("protobuf_backend"):
        software.append(f"protobuf backend {env['protobuf_backend']}")
    if software:
        facts.append(("software", ", ".join(software)))
    packages = env.get("packages") or {}
    if packages:
        named = [f"{name} {packages[name]}" for name in _KEY_PACKAGES if name in packages]
        rest = len(packages) - len(named)
        facts.append(("packages", ", ".join(named) + (f" (+{rest} more in the results file)" if rest > 0 else "")))
    revision = env.get("git_revision")
    if revision:
        facts.append(("revision", str(revision)[:12] + (" (uncommitted changes)" if str(revision).endswith("-dirty")
                                                         else "")))
    if header.get("run_id"):
        facts.append(("run", str(header["run_id"])))
    return facts


def provenance_table(header: Mapping[str, Any], results: Iterable[CellResult] = ()) -> Table:
    """The facts as a two-column table, titled for the top of a report."""
    table = Table("where and when this was measured", [Column("fact", "fact"), Column("value", "value")])
    table.rows = [{"fact": label, "value": text} for label, text in provenance(header, results)]
    return table
