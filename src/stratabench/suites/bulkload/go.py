"""The bulkload suite's Go rows: run the Go adapter and read its lines as cell results.

A run's Go cells are measured in rounds, as its Python cells are: each
round is a fresh ``stratabench-go`` process that measures every Go cell
(``count`` samples each), and a cell's values carry their round. What
one process gives all its samples alike (its heap and collector's state,
where its pages landed, the machine's speed in its few seconds) then
varies between rounds, so a cell's interval and ``compare``'s test see it.
With one process for six samples, two runs of identical code had 3 to 8 of
38 Go cells 15-75% apart beyond their intervals, so ``compare`` called
them changed (``go bson/encode`` 4.4x, loops 6 against 8).

The six values' interval (their whole range) is wide, about ±11% at the
median on a quiet machine, and the spread is in the samples, not ours to
remove: in the lead's two default runs on 548237c no process is the slow
one (each process's geometric mean over the cells within ±4% of the
cells' medians; the first is not cold) while one cell's value moves 7-13%
between processes; an untimed first sample in each process (six processes
of a discarded and a kept sample of 15 ms) made it wider, not narrower
(±24-41% against ±21-25% under load 1.5-2), so the sample after
testing.Benchmark's ramp-up is not cold either. Nine processes of 20 ms
narrowed it (±12-16%) but cost 13% more (28-29 s against 25 s) and still
left 42-47 of 48 cells past ±5%; the process's CPU time over the same
loops moved almost as much (±13% against the wall's ±16-23%).

Only the first process ramps up: testing.Benchmark's ramp to the benchtime
cost each sample about its own length again, so the later processes take
the first one's loop count per cell (``--loops``) and only measure, and
every process measures only the cells asked for (``--cells``: the default
run's 38, not the 50 of its formats x variants). Six processes then took
21.3 and 17.0 s against 25.8 and 28.3 s (alternated under the lock, load
1.3-1.8). The saving does not buy nine processes, the fewest whose median
interval drops a value at either end (of six to eight it is their whole
range): nine took 37.8 and 31.9 s against six ramped processes' 31.2 and
36.2 s (under the lock, load 2.2-4.3; all 38 cells flagged in each at that
load), so the default stays at the adaptive floor's six and
``go.processes`` asks for more.

What moves a cell between processes is the machine, not the process's
state (six processes of 4 cells x 3 samples, fixed loops, not under the
lock): the garbage collections a sample holds are the same count in every
process (json/warm 4-5 per 2 loads, gob/fresh 10-12 per 15, msgp/encode
2-3 per 70, bson/warm 6-7 per 4: the first sample of a process one or two
more, testing.Benchmark collects before every run), page faults do not
follow the time (msgp/encode 0-16 a sample in fast and slow processes
alike), while the same cell's samples take 1.5-2x longer in one process
than in the next, alike within the process (its ~100 ms): the window it
ran in. The collector is kept: a decoder's cost includes its collections,
as it would in a program. GOMAXPROCS=1 does not narrow it (8 cells, 8
processes each, alternated under the lock at load 1.4-1.6: per-process
sd 9-29% against 10-19% at the default 2), though it lowers several
medians (avro/encode 2.0 ms against 3.1, bson/warm 6.7 against 8.0:
presumably the collector's worker on the second core waits for it while
others use it), so the default stays: it is how a Go program runs here.
A cell's processes spread over the run, not back to back, is what would
hold the drift.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from stratabench.datasets import bulkload as dataset
from stratabench.datasets.verify import Integrity
from stratabench.engine.operation import CellSpec
from stratabench.errors import StratabenchError, UnavailableError
from stratabench.metrics import METRICS
from stratabench.results.records import CellResult, MetricResult
from stratabench.results.stats import instability
from stratabench.suites.bulkload.sizes import compressed_sizes

__all__ = ["run_go_cells"]


def run_go_cells(cells: Sequence[CellSpec], workdir: Path, *, size: int, seed: int, count: int,
                 benchtime: str, rebuild: bool = False, rounds: int = 1) -> Iterator[CellResult]:
    """Measure the Go cells with ``stratabench-go`` in ``rounds`` processes of ``count`` samples each.

    With one round each cell is yielded as its line arrives; with more, once
    every round has measured it (its values with their rounds). A round that
    fails yields what the earlier rounds measured before the error is raised.

    The program is built first when missing or built from other sources;
    the embed asset's build comes from the build cache when it holds one for
    these sources, Go, size and seed (its recorded build costs reported, with
    ``build_cached``). ``rebuild`` builds both anew.
    """
    from stratabench.adapters import golang

    ok, reason = golang.go_available()
    if not ok and not golang.binary_path().exists():
        raise UnavailableError(f"Go rows need Go: {reason}")
    try:
        golang.ensure_built(("stratabench-go",), rebuild=rebuild)
        go_info = golang.info()
    except StratabenchError as error:
        raise error.with_context("Go rows") from None
    by_name = {cell.name: cell for cell in cells}
    want = dataset.cached_hash(size, seed)
    notes = {"go_version": go_info.get("go_version"), "gomaxprocs": go_info.get("gomaxprocs")}
    embed_cache = golang.embed_cache_dir(size, seed)
    if rebuild:
        shutil.rmtree(embed_cache, ignore_errors=True)
    measured: dict[str, list[dict[str, Any]]] = {}
    formats = list(dict.fromkeys(c.params["format"] for c in cells))
    variants = list(dict.fromkeys(c.params["variant"] for c in cells))
    # Only the cells asked for, not every variant of every format (the default run's 38 of 50).
    wanted = [f"{c.params['format']}/{c.params['variant']}" for c in cells]
    loops: dict[str, int] = {}
    try:
        for number in range(rounds):
            for line in golang.run_bulkload(
                seed=seed, size=size, workdir=workdir, formats=formats, variants=variants,
                benchtime=benchtime, count=count, embed_cache=embed_cache, cells=wanted, loops=dict(loops),
            ):
                name = f"go {line['format']}/{line['variant']}"
                if number == 0 and line.get("loops"):
                    # Later processes take the first one's iterations and only measure: no ramp-up again.
                    loops[f"{line['format']}/{line['variant']}"] = int(line["loops"])
                if name in by_name:
                    measured.setdefault(name, []).append({**line, "round": number})
                    if rounds == 1:
                        yield _go_result(by_name[name], measured.pop(name), want, notes, rounds)
    except golang.GoRunError as error:
        yield from (_go_result(by_name[name], lines, want, notes, rounds) for name, lines in measured.items())
        raise error.with_context("Go adapter") from None
    yield from (_go_result(by_name[name], lines, want, notes, rounds) for name, lines in measured.items())


def _go_result(spec: CellSpec, lines: list[dict[str, Any]], want: str, notes: dict[str, Any],
               rounds: int) -> CellResult:
    """A Go cell's adapter lines, one a round, as a cell result checked against the Python-side hash.

    Its samples keep their rounds when there were several; the first failed
    round's error fails the cell; the other figures are the first round's.
    """
    line = next((each for each in lines if each.get("error")), lines[0])
    samples: dict[str, list[float]] = {}
    numbers: dict[str, list[int]] = {}
    for each in lines:
        for name, values in (each.get("samples") or {}).items():
            samples.setdefault(name, []).extend(float(v) for v in values)
            numbers.setdefault(name, []).extend([each["round"]] * len(values))
    metrics = {name: MetricResult.of(values, numbers[name] if rounds > 1 else None)
               for name, values in samples.items() if values}
    if line.get("size_bytes") is not None:
        metrics["size_bytes"] = MetricResult.of([float(line["size_bytes"])])
    extra = dict(line.get("extra") or {})
    asset = extra.pop("asset", None)
    if isinstance(asset, str) and Path(asset).is_file():
        for name, value in compressed_sizes(Path(asset).read_bytes()).items():
            metrics[name] = MetricResult.of([value])
    for name, value in extra.items():
        if name in METRICS and isinstance(value, (int, float)):
            metrics[name] = MetricResult.of([float(value)])
    integrity = Integrity(want, line["hash"], None if line["hash"] == want else
                          f"Go decoded data hashing to {line['hash']}, not {want}") if line.get("hash") else None
    error = line.get("error")
    if error is None and integrity is not None and not integrity.ok:
        error = f"integrity: {integrity.detail}"
    return CellResult(
        suite=spec.suite, cell=spec.name, params=dict(spec.params), language="go",
        status="failed" if error else "ok", error=error, loops=line.get("loops"),
        metrics=metrics, integrity=integrity,
        notes={**notes, **{k: v for k, v in extra.items() if k not in METRICS}},
        # A fixed count of samples: no target to miss, but the spread (of the rounds, with rounds) still tells.
        flags=tuple(instability(metrics["wall_ns"].summary)) if "wall_ns" in metrics else (),
        judged="wall_ns" if "wall_ns" in metrics else None,  # timed in the Go process, per operation
    )
