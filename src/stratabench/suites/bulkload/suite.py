"""The bulkload suite's cells and operations: load a 100,000-record asset in many formats (specs/bulkload.md).

The default run loads 10,000 records, to stay within a few minutes;
``run bulkload --full`` loads the seed's 100,000, as its published table did.

Python cells decode the asset with each registered codec, in each of its
modes; Go cells run the study's five Go formats through the Go adapter
(``stratabench-go``), in the ``warm`` (the seed's semantics) and ``fresh``
variants. Cross-language cells decode the files Go wrote with Python codecs.
Every cell's result is checked against the dataset's canonical SHA-1, so
Python and Go answer to one hash.

Modes a codec declares inexact (``datetime`` paths that keep only
microseconds) run only with ``--set bulkload.inexact=yes``, and then fail
their integrity check, as they must.

Settings (``bulkload.inexact`` and the Go rows' ``go.*``):
``stratabench list settings`` shows them with their defaults.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from stratabench.datasets import bulkload as dataset
from stratabench.datasets.verify import Integrity
from stratabench.engine.operation import CellSpec, Operation
from stratabench.options import RunOptions
from stratabench.results.records import CellResult
from stratabench.settings import Setting
from stratabench.suites import SUITES
from stratabench.suites.kit.suite import Suite

__all__ = ["DEFAULT_SIZE", "GO_FORMATS", "GO_VARIANTS", "STUDY_SIZE", "BulkloadSuite", "size_of"]

#: The seed's asset: what ``run bulkload --full`` loads, and what its published table measured.
STUDY_SIZE = 100_000

#: What the default run loads. At the study's size a Python cell's set-up, traced memory pass and six
#: samples take 4-7 s (the embed compile 40 s), and the suite alone took two of the default run's three
#: minutes; a tenth of the asset keeps every format and its ratios. The 100,000-record hash is still
#: checked, by the test suite (spec §7.1: "a slower test, or the default run").
DEFAULT_SIZE = 10_000


def size_of(options: RunOptions) -> int:
    """The records a run loads: ``--size``, else the study's with ``--full``, else the default run's."""
    return options.size or (STUDY_SIZE if options.full else DEFAULT_SIZE)


#: The seed's formats, in the seed's row order.
GO_FORMATS = ("embed", "gob", "json", "msgp", "msgpack")
GO_VARIANTS = ("warm", "fresh")

#: Files the Go adapter writes that Python codecs can read, and how: (codec, mode).
CROSS_LANGUAGE = {"json": ("json", "raw"), "msgpack": ("msgpack", "go-msgpack"), "msgp": ("msgpack", "go-msgp")}

def _verifier(size: int, seed: int, to_rows: Any) -> Any:
    from stratabench.datasets.verify import verify_rows

    want = dataset.cached_hash(size, seed)

    def verify(result: object) -> Integrity:
        return verify_rows(
            to_rows(result), expected_hash=want, hash_rows=dataset.canonical_hash,
            expected_rows=lambda: dataset.cached_rows(size, seed), difference=dataset.first_difference,
        )

    return verify


@SUITES.register("bulkload")
class BulkloadSuite(Suite):
    """Load a 100,000-record asset in many formats, Python and Go (goddbench, 2018)."""

    full_grid = f"the seed's asset of {STUDY_SIZE:,} records (the default run loads {DEFAULT_SIZE:,})"

    settings = (
        Setting("bulkload.inexact", "no", "also run the modes that lose data by design (they fail their check)",
                "flag"),
        Setting("go.benchtime", "", f"Go's -benchtime; default 1.5s / go.count at the study's {STUDY_SIZE:,} "
                "records (the seed used 1s with go.count=3), else --min-time"),
        Setting("go.count", "", "samples per Go cell; default --samples, else the adaptive floor (6: a 95% "
                "interval)", "whole",
                minimum=1, maximum=1000),
        Setting("go.formats", "", f"Go formats; default all: {','.join(GO_FORMATS)}", "list"),
        Setting("go.variants", "", f"Go variants; default all: {','.join(GO_VARIANTS)}", "list"),
    )

    def sized_datasets(self) -> tuple[str, ...]:
        return ("bulkload",)

    @property
    def size(self) -> int:
        return size_of(self.options)

    @property
    def seed(self) -> int:
        return dataset.DEFAULT_SEED if self.options.seed is None else self.options.seed

    def _default_benchtime(self, count: int) -> str:
        # At the study's size, 1.5 s per cell shared among the samples: the
        # adaptive floor's 6 take 250 ms each, a dozen to hundreds of loads
        # per sample, enough for a 95% interval, and ten Go cells then cost
        # 15 s (the seed took 3 × 1 s; `--set go.benchtime=1s --set go.count=3`
        # reproduces it); at other sizes the engine's own sample time, but no
        # more than a Python cell's budget shared among the samples: each Go
        # sample also pays testing.Benchmark's ramp-up, about its own length again.
        engine = self.options.engine
        if self.size == STUDY_SIZE:
            return f"{max(1500 // count, 100)}ms"
        return f"{max(min(engine.min_sample_ns, engine.cell_budget_ns // count), 10_000_000) // 1_000_000}ms"

    def _go_list(self, name: str, every: Sequence[str]) -> list[str]:
        return self.config.items(name) or list(every)

    def cells(self) -> list[CellSpec]:
        from stratabench.layers.codecs import CODECS

        base = {"size": self.size, "seed": self.seed}
        cells = []
        wanted = self.options.codecs or tuple(CODECS.names)
        with_inexact = self.config.flag("bulkload.inexact")
        for name in wanted:
            info = CODECS.info(name)  # unknown codec names fail here, before any measuring
            modes: tuple[str, ...] = getattr(info.cls, "modes", ("typed",))
            inexact: tuple[str, ...] = getattr(info.cls, "inexact_modes", ())
            for mode in modes:
                if mode.startswith("go-"):
                    continue  # reads a Go asset: a cross-language cell below
                if mode in inexact and not with_inexact:
                    continue  # loses data by design: shown only when asked, and then as failing
                cells.append(self.spec(f"{name}/{mode}", {**base, "codec": name, "mode": mode}))
        go_formats = self._go_list("go.formats", GO_FORMATS)
        for go_format, (codec, mode) in CROSS_LANGUAGE.items():
            if go_format in go_formats and codec in wanted and mode in getattr(CODECS.info(codec).cls, "modes", ()):
                cells.append(self.spec(f"{codec}/{mode} <- go {go_format}",
                                 {**base, "codec": codec, "mode": mode, "asset": f"go-{go_format}"}))
        for go_format in go_formats:
            for variant in self._go_list("go.variants", GO_VARIANTS):
                cells.append(self.spec(f"go {go_format}/{variant}",
                                 {**base, "format": go_format, "variant": variant}, language="go"))
        return cells

    def prepare(self, cell: CellSpec, workdir: Path) -> Operation:
        from stratabench.datasets.bulkload import BULKLOAD_SCHEMA
        from stratabench.layers.codecs.base import make_format

        size, seed = cell.params["size"], cell.params["seed"]
        fmt = make_format(cell.params["codec"], BULKLOAD_SCHEMA, cell.params["mode"], workdir=workdir)
        if hasattr(fmt, "reuse_builds"):  # a format whose set-up builds something (embed compiles a module)
            fmt.reuse_builds = not self.options.rebuild
        asset = workdir / "asset.bin"
        if "asset" in cell.params:
            from stratabench.adapters import golang

            golang.export(cell.params["asset"].removeprefix("go-"), seed, size, asset)
        else:
            asset.write_bytes(fmt.encode(dataset.cached_rows(size, seed)))
        decode = fmt.decode
        path = str(asset)
        if fmt.resident:
            # Already in memory, as Go's embedded variable is: nothing to read.
            data = asset.read_bytes()

            def load() -> object:
                return decode(data)

        else:

            def load() -> object:
                # The operation is the study's: read the asset (from the page
                # cache) and decode it into usable records.
                with open(path, "rb") as file:
                    return decode(file.read())

        return Operation(
            call=load,
            verify=_verifier(size, seed, fmt.to_rows),
            size_bytes=asset.stat().st_size,
            notes={"exact": fmt.exact},
        )

    def run_external(self, cells: Sequence[CellSpec], workdir: Path) -> Iterator[CellResult]:
        from stratabench.suites.bulkload.go import run_go_cells

        count = self.config.whole("go.count") if self.config.given("go.count") else self.options.engine.least_samples
        return run_go_cells(cells, workdir, size=self.size, seed=self.seed, count=count,
                            benchtime=self.config.text("go.benchtime") or self._default_benchtime(count),
                            rebuild=self.options.rebuild)
