"""The bulkload suite's Go rows: run the Go adapter and read its lines as cell results."""

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
                 benchtime: str, rebuild: bool = False) -> Iterator[CellResult]:
    """Measure the Go cells with ``stratabench-go``, yielding each result.

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
    try:
        for line in golang.run_bulkload(
            seed=seed, size=size, workdir=workdir,
            formats=list(dict.fromkeys(c.params["format"] for c in cells)),
            variants=list(dict.fromkeys(c.params["variant"] for c in cells)),
            benchtime=benchtime, count=count, embed_cache=embed_cache,
        ):
            spec = by_name.get(f"go {line['format']}/{line['variant']}")
            if spec is not None:
                yield _go_result(spec, line, want, notes)
    except golang.GoRunError as error:
        raise error.with_context("Go adapter") from None


def _go_result(spec: CellSpec, line: dict[str, Any], want: str, notes: dict[str, Any]) -> CellResult:
    """A Go adapter line as a cell result, checked against the Python-side hash."""
    samples = {name: values for name, values in (line.get("samples") or {}).items() if values}
    metrics = {name: MetricResult.of([float(v) for v in values]) for name, values in samples.items()}
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
        # A fixed count of samples: no target to miss, but the spread still tells.
        flags=tuple(instability(metrics["wall_ns"].summary)) if "wall_ns" in metrics else (),
        judged="wall_ns" if "wall_ns" in metrics else None,  # timed in the Go process, per operation
    )
