"""After a ``kill -9`` of a load: the seconds its clients spilled, kept as a partial cell by the next command.

While a configuration runs, its clients write each finished second to
``load-spill/`` in the command's temporary directory
(:func:`spilling`; the lines: :mod:`stratabench.load.spill`), beside
``configuration.json``: what the cell would be (its name, parameters,
pace), the results header and the output file of the command. The
directory goes when the configuration's cell is written; a ``kill -9``
leaves it in the temporary directory, whose owner lock is then free
(:mod:`stratabench.scratch`).

The next ``stratabench load``, ``run`` or ``clean`` calls
:func:`recover_killed_loads` before it sweeps leftovers: each client's
report is rebuilt from its lines, and the intervals every client finished
become a partial cell by the very rule of an interrupted load
(:func:`~stratabench.load.run.interrupted_result`), its error saying it was
killed and who recovered it. The cell goes to a new results file next to
the killed command's, ``NAME.recovered.jsonl`` (``NAME.recovered-2.jsonl``
and so on when that exists: no file is ever overwritten), with the killed
command's header; then the spill is removed. The user's store is not
touched (``clean`` removes the keys, as ever).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stratabench.errors import OutputExistsError, StratabenchError
from stratabench.load.cells import load_cell
from stratabench.load.client import ClientReport
from stratabench.load.histogram import encode, merge
from stratabench.load.run import Pacing, interrupted_result
from stratabench.load.spill import client_file, spilled_seconds
from stratabench.results.writer import ResultsWriter
from stratabench.scratch import leftovers

__all__ = ["SPILL_DIR", "recover_killed_loads", "spilled_report", "spilled_reports", "spilling"]

SPILL_DIR = "load-spill"
"""The spill's directory in a command's temporary root."""

_CONFIGURATION = "configuration.json"
_MOST_NAMES = 1000


@dataclass(frozen=True, kw_only=True)
class _RecordedPacing(Pacing):
    """A configuration as its spill recorded it: what a cell of it says, without what its clients sent."""

    record: Mapping[str, Any]

    @property
    def cell_name(self) -> str:
        return str(self.record["cell_name"])

    @property
    def subject(self) -> tuple[str, str]:
        header, value = self.record["subject"]
        return str(header), str(value)

    @property
    def title(self) -> str:
        return str(self.record["title"])

    @property
    def language(self) -> str:
        return str(self.record["language"])

    def cell_params(self) -> dict[str, Any]:
        return dict(self.record["cell_params"])

    # The recorded values, where a configuration's class has its own.
    @property
    def verified_phrase(self) -> str:  # type: ignore[override]
        return str(self.record["verified_phrase"])

    @property
    def checked_kind(self) -> str | None:  # type: ignore[override]
        kind = self.record["checked_kind"]
        return None if kind is None else str(kind)

    @property
    def failed_check_meaning(self) -> str:  # type: ignore[override]
        return str(self.record["failed_check_meaning"])


def _record(spec: Pacing) -> dict[str, Any]:
    return {"clients": spec.clients, "rate_per_s": spec.rate_per_s, "warmup_s": spec.warmup_s,
            "duration_s": spec.duration_s, "cell_name": spec.cell_name, "subject": list(spec.subject),
            "title": spec.title, "language": spec.language, "cell_params": spec.cell_params(),
            "verified_phrase": spec.verified_phrase, "checked_kind": spec.checked_kind,
            "failed_check_meaning": spec.failed_check_meaning}  # fmt: skip


@contextmanager
def spilling(root: Path | None, spec: Pacing, *, output: Path, header: Mapping[str, Any], runner: str,
             params: Mapping[str, Any], command: str) -> Iterator[str | None]:  # fmt: skip
    """The spill directory of one configuration in ``root``, with its configuration; removed at the end.

    Yields the directory for :func:`~stratabench.load.run.run_clients`, or
    ``None`` when ``root`` is ``None`` (the runner's clients do not spill)
    or it cannot be made (a full disk: the load runs without). Keep the
    cell inside the block: a kill between its end and the cell would lose
    the seconds, where a kill after the cell at worst recovers them twice.
    ``command`` names the killed command in what the recovery prints.
    """
    if root is None:
        yield None
        return
    directory = root / SPILL_DIR
    configuration = {"command": command, "output": str(output.absolute()), "header": dict(header),
                     "runner": runner, "params": dict(params), "spec": _record(spec)}  # fmt: skip
    try:
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(mode=0o700)
        making = directory / f".{_CONFIGURATION}"
        making.write_text(json.dumps(configuration), encoding="utf-8")
        making.rename(directory / _CONFIGURATION)  # whole, or not there
    except (OSError, ValueError):
        shutil.rmtree(directory, ignore_errors=True)
        yield None
        return
    try:
        yield str(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def spilled_report(directory: str | Path, index: int, interval_s: float, fatal: str) -> ClientReport | None:
    """Client ``index``'s report rebuilt from its spill file: its finished intervals; ``None`` when it has none.

    Its window is those intervals and ``fatal`` says why it ended; what no
    line records (an open loop's schedule) is ``None``.

    Raises
    ------
    ValueError, TypeError, KeyError
        A line whose fields are not of their types (a file this code did not write).
    """
    seconds = spilled_seconds(client_file(directory, index))
    if not seconds:
        return None
    last = seconds[-1]
    histograms = tuple(str(second["histogram"]) for second in seconds)
    merged = merge(histograms)
    return ClientReport(
        index=index, host=str(last["host"]), pid=int(last["pid"]), host_cpus=int(last["host_cpus"]),
        ops=merged.get_total_count(), kinds={str(k): int(v) for k, v in dict(last["kinds"]).items()},
        errors=int(last["errors"]), first_error=last["first_error"], failed_checks=int(last["failed_checks"]),
        first_failed_check=last["first_failed_check"], histogram=encode(merged), interval_histograms=histograms,
        window_s=len(seconds) * interval_s, busy_cpu_s=float(last["busy_cpu_s"]), wall_s=float(last["wall_s"]),
        host_busy=float(last["host_busy"]), scheduled=None, unsent=None, final_lag_ns=None, fatal=fatal,
    )  # fmt: skip


def spilled_reports(directory: str | Path, spec: Pacing, fatal: str) -> list[ClientReport]:
    """Every client's report rebuilt from its spill file, or none when a client finished no interval.

    The seconds every client finished are the only ones a partial cell may
    keep (:func:`~stratabench.load.run.interrupted_result`), so one client
    without a line leaves nothing to keep.
    """
    interval_s = spec.duration_s / spec.intervals
    reports = [spilled_report(directory, index, interval_s, fatal) for index in range(spec.clients)]
    finished = [report for report in reports if report is not None]
    return finished if len(finished) == len(reports) else []


def recover_killed_loads(by: str, base: Path | None = None) -> list[str]:
    """Keep what killed loads spilled, as partial cells in new results files; one line each to say where.

    ``by`` names the command recovering (``stratabench clean``), in each
    cell's error; ``base`` is where the temporary roots are (the default
    :func:`~stratabench.scratch.scratch_base`). The spill of a command
    that still runs is left alone; every spill read is removed, whether a
    cell came of it or not (the line says why not).
    """
    said = []
    for directory in leftovers(SPILL_DIR, base):
        try:
            said.append(_recover(directory, by))
        except (OSError, ValueError, TypeError, KeyError, StratabenchError) as error:
            reason = error.message if isinstance(error, StratabenchError) else f"{type(error).__name__}: {error}"
            said.append(f"the seconds a killed load left in {directory} could not be kept: {reason}")
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    return said


def _recover(directory: Path, by: str) -> str:
    configuration = json.loads((directory / _CONFIGURATION).read_text(encoding="utf-8"))
    record = configuration["spec"]
    spec = _RecordedPacing(clients=int(record["clients"]), rate_per_s=record["rate_per_s"],
                           warmup_s=float(record["warmup_s"]), duration_s=float(record["duration_s"]), record=record)
    killed = f"a killed `{configuration['command']}` ({spec.cell_name})"
    finished = spilled_reports(directory, spec, f"killed; recovered by {by}")
    partial = interrupted_result(spec, finished, f"killed (kill -9 or a crash; recovered by {by})") \
        if finished else None
    if partial is None:
        return f"{killed} finished no second in every client: nothing to keep"
    cell = load_cell(partial, params=configuration["params"], runner=configuration["runner"],
                     notes={"partial": True, "recovered_by": by})
    output = Path(configuration["output"])
    for number in range(1, _MOST_NAMES + 1):
        suffix = ".recovered" if number == 1 else f".recovered-{number}"
        path = output.with_name(f"{output.stem}{suffix}{output.suffix or '.jsonl'}")
        try:
            with ResultsWriter(path, configuration["header"]) as writer:
                writer.write(cell)
        except OutputExistsError:
            continue
        kept = len(partial.interval_histograms)
        return f"{killed}: kept the {kept} s every client finished, as a partial cell: {path}"
    raise OSError(f"{_MOST_NAMES} recovered files next to {output} exist already; remove some")
