"""The bulkload suite's cells and operations: load a 100,000-record asset in many formats (docs/studies/bulkload.md).

The default run loads 10,000 records, to stay within a few minutes;
``run bulkload --full`` loads the seed's 100,000, as its published table did.

Python cells decode the asset with each registered codec, in each of its
modes, and encode the records with it (``codec/mode encode``); a lazy
format (protobuf's upb, Arrow, FlatBuffers...) has two more rows after its
parse: ``access`` reads one field of every record and ``read`` every field,
the figure every format can be held to. Go cells run the Go adapter's
formats (``stratabench-go``) in the ``warm`` (the seed's semantics) and
``fresh`` load variants and ``encode``; a Go load always decodes into typed
records, every field read. Cross-language cells decode the files Go wrote
with Python codecs. Every cell's result is checked against the dataset's
canonical SHA-1 (an encode by decoding what it wrote), so Python and Go
answer to one hash. Every row also carries the asset's size after zstd and
lz4.

Modes a codec declares inexact (``datetime`` paths that keep only
microseconds) run only with ``--set bulkload.inexact=yes``, and then fail
their integrity check, as they must.

Settings (``bulkload.inexact`` and the Go rows' ``go.*``):
``stratabench list settings`` shows them with their defaults.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stratabench.datasets import bulkload as dataset
from stratabench.datasets.verify import Integrity
from stratabench.engine.operation import CellSpec, Operation
from stratabench.engine.slices import slices_back_to_back
from stratabench.options import RunOptions
from stratabench.results.records import CellResult
from stratabench.run_shared import made_once
from stratabench.settings import Setting
from stratabench.suites import SUITES
from stratabench.suites.bulkload.sizes import compressed_sizes
from stratabench.suites.kit.suite import Suite, min_time_setting

if TYPE_CHECKING:
    from stratabench.suites.bulkload.go import GoProcesses

__all__ = ["DEFAULT_SIZE", "GO_FORMATS", "GO_PROCESSES", "GO_SAMPLES", "GO_MORE_FORMATS", "GO_VARIANTS", "STUDY_SIZE", "BulkloadSuite", "size_of"]

#: The seed's asset: what ``run bulkload --full`` loads, and what its published table measured.
STUDY_SIZE = 100_000

#: What the default run loads. At the study's size a Python cell's set-up, traced memory pass and six
#: samples take 4-7 s (the embed compile 40 s), and the suite alone took two of the default run's three
#: minutes; a tenth of the asset keeps every format and its ratios. The 100,000-record hash is still
#: checked, by the test suite (docs/studies/bulkload.md §7: "by a slower test or the default run").
DEFAULT_SIZE = 10_000


#: The Python cells' calibration target: a load of 10,000 records takes 1-40 ms, so 30 ms samples still time
#: one or more whole loads each, and sixty-odd cells (both directions, twenty formats) keep the default run
#: to a few minutes; ``--set bulkload.min_time=SECONDS`` chooses another.
SAMPLE_NS = 30_000_000


def size_of(options: RunOptions) -> int:
    """The records a run loads: ``--size``, else the study's with ``--full``, else the default run's."""
    return options.size or (STUDY_SIZE if options.full else DEFAULT_SIZE)


#: A run's Go cells: stratabench-go processes, each a slice between the Python rounds, and the samples each
#: takes of every cell, in passes over the cells (``go.processes``, ``go.count``; the module docstring of
#: :mod:`stratabench.suites.bulkload.go` has the measurements behind them): nine, so that a cell's interval
#: leaves out its farthest process at each end, of 20 ms samples (``_default_benchtime``).
GO_PROCESSES = 9
GO_SAMPLES = 1

#: The seed's formats, in the seed's row order.
GO_FORMATS = ("embed", "gob", "json", "msgp", "msgpack")
#: The Go adapter's other formats (go/internal/format, one file each), in its listing order.
GO_MORE_FORMATS = ("msgpack5", "go-json", "jsoniter", "sonic", "segmentio-json", "cbor", "bson", "avro", "protobuf",
                   "flatbuffers", "arrow", "xml")
#: Load variants (the seed's warm, the honest fresh), then the encode direction.
GO_VARIANTS = ("warm", "fresh", "encode")

#: The steps of a Python cell besides the load: ``encode`` (records to bytes), and for a lazy
#: format ``access`` (one field of every record) and ``read`` (every field), each after its load.
ENCODE, ACCESS, READ = "encode", "access", "read"
#: Every cell's ``direction``: bytes to records, or records to bytes (the report answers each apart).
LOAD = "load"


def _access_verifier(size: int, seed: int, fmt: Any) -> Any:
    """Check an ``access`` result: the first field of every record, as the dataset has it."""
    want = dataset.cached_hash(size, seed)

    def verify(values: Any) -> Integrity:
        expected = [row[0] for row in dataset.cached_rows(size, seed)]
        got = list(values)
        if got == expected and all(type(v) is type(e) for v, e in zip(got, expected)):
            return Integrity(want, want)
        at = next((i for i, (v, e) in enumerate(zip(got, expected)) if v != e or type(v) is not type(e)),
                  min(len(got), len(expected)))
        return Integrity(want, "?" * 40, f"{fmt.label} access: record {at} of {len(got):,} read differs from the dataset")

    return verify


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
        min_time_setting("bulkload", SAMPLE_NS),
        Setting("go.benchtime", "", f"Go's -benchtime; default 1.5s / (go.count x go.processes) at the study's "
                f"{STUDY_SIZE:,} records (the seed used 1s, go.count=3, go.processes=1), else --min-time"),
        Setting("go.count", "", "samples of each Go cell in each process, taken in passes over the cells (a "
                f"process's value is their median); default {GO_SAMPLES}", "whole",
                minimum=1, maximum=1000),
        Setting("go.processes", "", "fresh stratabench-go processes, each taken between two rounds of the run "
                f"(a Go cell's rounds; a cell missing the target takes more, up to --allowance-rounds); default "
                f"{GO_PROCESSES}, or --samples (exactly)", "whole", minimum=1, maximum=1000),
        Setting("go.formats", "", f"Go formats; default all: {','.join(GO_FORMATS + GO_MORE_FORMATS)}", "list"),
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
        """Go's -benchtime for each of a Go cell's ``count`` samples (every process's together).

        At the study's size, 1.5 s per cell shared among the samples, at
        least 100 ms each (a dozen to hundreds of loads; the seed took 3 x 1 s:
        ``--set go.benchtime=1s --set go.count=3 --set go.processes=1``
        reproduces it); at other sizes, the time a Python cell's floor of
        rounds takes (its sample time, the suite's own target or the engine's
        if shorter, times the floor), within its budget, shared among the
        samples, at least 10 ms each: the default run's 30 ms x 6 (each
        sample also pays testing.Benchmark's first run and two collections
        besides, so more, shorter samples cost more).
        """
        engine = self.tuned_engine(SAMPLE_NS)
        if self.size == STUDY_SIZE:
            return f"{max(1500 // count, 100)}ms"
        floor_ns = min(engine.min_sample_ns * engine.least_samples, engine.cell_budget_ns)
        return f"{max(floor_ns // count, 10_000_000) // 1_000_000}ms"

    def _go_list(self, name: str, every: Sequence[str]) -> list[str]:
        return self.config.items(name) or list(every)

    def cells(self) -> list[CellSpec]:
        from stratabench.layers.codecs import CODECS
        from stratabench.layers.codecs.go_assets import GO_ASSET_CODECS

        base = {"size": self.size, "seed": self.seed}
        cells = []
        wanted = self.options.codecs or tuple(CODECS.names)
        with_inexact = self.config.flag("bulkload.inexact")
        for name in wanted:
            info = CODECS.info(name)  # unknown codec names fail here, before any measuring
            modes: tuple[str, ...] = getattr(info.cls, "modes", ("typed",))
            inexact: tuple[str, ...] = getattr(info.cls, "inexact_modes", ())
            lazy: tuple[str, ...] = getattr(info.cls, "lazy_modes", ())
            encodes = not getattr(info.cls, "no_encode_row", "")
            # The default run keeps to a few minutes: each codec's first mode (and every embed load, the
            # study's own, and the lossy modes when asked for); --full, or naming the codec, runs every mode.
            every_mode = self.options.full or bool(self.options.codecs) or name == "embed"
            for mode in modes:
                if not every_mode and mode != modes[0] and not (mode in inexact and with_inexact):
                    continue
                if mode.startswith("go-"):
                    continue  # reads a Go asset: a cross-language cell below
                if mode in inexact and not with_inexact:
                    continue  # loses data by design: shown only when asked, and then as failing
                params = {**base, "codec": name, "mode": mode, "direction": LOAD}
                # Each codec is compared with json in the same direction and step: those cells share a
                # group, so every round measures them back to back and their ratios are paired.
                cells.append(self.spec(f"{name}/{mode}", params, group=LOAD))
                for step in (ACCESS, READ) if mode in lazy else ():
                    cells.append(self.spec(f"{name}/{mode} {step}", {**params, "step": step}, group=f"{LOAD} {step}"))
                if encodes:
                    cells.append(self.spec(f"{name}/{mode} {ENCODE}",
                                           {**params, "step": ENCODE, "direction": ENCODE}, group=ENCODE))
        go_formats = self._go_list("go.formats", GO_FORMATS + GO_MORE_FORMATS)
        for go_format, (codec, mode) in GO_ASSET_CODECS.items():
            if go_format not in GO_FORMATS and not (self.options.full or self.options.codecs):
                # The default run reads the seed's Go files; --full (or naming codecs) reads every wire Go
                # writes, as the test suite always does, both ways.
                continue
            if go_format in go_formats and codec in wanted and mode in getattr(CODECS.info(codec).cls, "modes", ()):
                # A lazy reader is held to reading every field of Go's records, as Go's own load does.
                reads = mode in getattr(CODECS.info(codec).cls, "lazy_modes", ())
                cells.append(self.spec(f"{codec}/{mode}{f' {READ}' if reads else ''} <- go {go_format}",
                                       {**base, "codec": codec, "mode": mode, "asset": f"go-{go_format}",
                                        "direction": LOAD,
                                        **({"step": READ} if reads else {})}))
        chosen_variants = self.config.given("go.variants") or self.options.full
        for go_format in go_formats:
            for variant in self._go_list("go.variants", GO_VARIANTS):
                if variant == ENCODE and go_format == "embed":
                    continue  # embed's encode is its build: reported as the build's costs
                if variant == "fresh" and go_format not in GO_FORMATS and not chosen_variants:
                    continue  # the default run loads fresh only the seed's formats, beside its figures
                cells.append(self.spec(f"go {go_format}/{variant}",
                                       {**base, "format": go_format, "variant": variant,
                                        "direction": ENCODE if variant == ENCODE else LOAD}, language="go"))
        return cells

    @classmethod
    def warm(cls) -> None:
        # The default run's records and their hash: every Python cell starts from them.
        dataset.cached_rows(DEFAULT_SIZE, dataset.DEFAULT_SEED)
        dataset.cached_hash(DEFAULT_SIZE, dataset.DEFAULT_SEED)

    def prepare(self, cell: CellSpec, workdir: Path) -> Operation:
        from stratabench.datasets.bulkload import BULKLOAD_SCHEMA
        from stratabench.layers.codecs import CODECS, make_format

        size, seed = cell.params["size"], cell.params["seed"]
        step = cell.params.get("step")
        fmt = make_format(cell.params["codec"], BULKLOAD_SCHEMA, cell.params["mode"], workdir=workdir)
        if hasattr(fmt, "reuse_builds"):  # a format whose set-up builds something (embed compiles a module)
            fmt.reuse_builds = not self.options.rebuild
        asset = workdir / "asset.bin"
        rows = dataset.cached_rows(size, seed)
        # The asset is the same in every visit of every cell of a format: the run's first visit that needs it
        # makes it, the others read it (made_once), where each visit encoded its own (1.2 s of every round).
        if "asset" in cell.params:
            from stratabench.adapters import golang

            go_format = cell.params["asset"].removeprefix("go-")
            data = made_once(f"go-{go_format}-{size}-{seed}.bin",
                             lambda: golang.export(go_format, seed, size, asset).read_bytes())
        elif fmt.decodes_own_encoding:
            data = fmt.encode(rows)
        else:
            data = made_once(f"{fmt.codec}-{fmt.mode}-{size}-{seed}.bin", lambda: fmt.encode(rows))
        asset.write_bytes(data)
        decode, to_rows = fmt.decode, fmt.to_rows
        verify = _verifier(size, seed, to_rows)
        path = str(asset)
        call: Any
        if step == ENCODE:
            encode = fmt.encode

            def call() -> object:
                return encode(rows)

            def verify_encoded(encoded: Any) -> Integrity:
                integrity: Integrity = verify(decode(encoded))
                return integrity

            check = verify_encoded
        elif fmt.resident:
            # Already in memory, as Go's embedded variable is: nothing to read.
            def call() -> object:
                return decode(data)

            check = verify
        else:

            def load() -> object:
                # The operation is the study's: read the asset (from the page
                # cache) and decode it into usable records.
                with open(path, "rb") as file:
                    return decode(file.read())

            call, check = load, verify
            if step == READ:
                # Every field of every record, through the format's own reads: what a lazy decoder owes.
                def call() -> object:
                    return to_rows(load())

                check = _verifier(size, seed, list)
            elif step == ACCESS:
                access = fmt.access

                def call() -> object:
                    return access(load())

                check = _access_verifier(size, seed, fmt)
        return Operation(
            call=call,
            verify=check,
            size_bytes=len(data),
            extra_of=lambda: compressed_sizes(data),
            notes={"exact": fmt.exact},
            engine=self.tuned_engine(SAMPLE_NS),
            # A load or an encode holds no connection a fork would share, and a memory pass in the worker made
            # round 0 of these cells 5-35% faster than their later rounds. A worker that runs threads (pyarrow's
            # pool, in the arrow and parquet cells) still traces in itself: the engine forks no threaded process.
            memory_in_child=True,
            # A codec whose library works on a thread pool of its own: the calling thread's CPU time leaves part out.
            waits=CODECS.get(cell.params["codec"]).threaded,
        )

    def slices(self, cells: Sequence[CellSpec], workdir: Path) -> GoProcesses:
        """The Go cells one ``stratabench-go`` process a slice, each between two rounds of the run."""
        from stratabench.suites.bulkload.go import GoProcesses

        count, processes = self._go_samples()
        return GoProcesses(cells, workdir, size=self.size, seed=self.seed, count=count, processes=processes,
                           benchtime=self.config.text("go.benchtime") or self._default_benchtime(count * processes),
                           rebuild=self.options.rebuild)

    def run_external(self, cells: Sequence[CellSpec], workdir: Path) -> Iterator[CellResult]:
        # Without a run's rounds (stratabench ab), the processes back to back.
        return iter(slices_back_to_back(self, cells, workdir))

    def _go_samples(self) -> tuple[int, int]:
        """(samples each Go process takes of each cell, processes): ``go.count`` and ``go.processes``, by default
        :data:`GO_SAMPLES` in :data:`GO_PROCESSES` processes; with ``--samples N``, N processes of one sample, as a
        Python cell's N rounds (:mod:`stratabench.suites.bulkload.go` has the measurements)."""
        fixed = self.options.engine.samples
        count = self.config.whole("go.count") if self.config.given("go.count") else 1 if fixed else GO_SAMPLES
        processes = self.config.whole("go.processes") if self.config.given("go.processes") else fixed or GO_PROCESSES
        return count, processes
