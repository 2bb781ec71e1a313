"""The bulkload suite: load a 100,000-record asset in many formats (specs/bulkload.md).

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
from stratabench.datasets.cache import cached
from stratabench.engine.operation import CellSpec, Integrity, Operation
from stratabench.errors import StratabenchError, UnavailableError
from stratabench.metrics import METRICS
from stratabench.report.compare import ratio
from stratabench.report.generic import integrity_text, status_text
from stratabench.report.table import Column, Table
from stratabench.results.records import CellResult, MetricResult
from stratabench.settings import Setting
from stratabench.suites import SUITES
from stratabench.suites.base import Suite
from stratabench.units import format_count

__all__ = ["BulkloadSuite", "GO_FORMATS", "GO_VARIANTS", "PUBLISHED"]

DEFAULT_SIZE = 100_000

#: The seed's formats, in the seed's row order.
GO_FORMATS = ("embed", "gob", "json", "msgp", "msgpack")
GO_VARIANTS = ("warm", "fresh")

#: Files the Go adapter writes that Python codecs can read, and how: (codec, mode).
CROSS_LANGUAGE = {"json": ("json", "raw"), "msgpack": ("msgpack", "go-msgpack"), "msgp": ("msgpack", "go-msgp")}

#: The seed's published figures (specs/bulkload.md §6): format → (N, ns/op, B/op, allocs/op).
PUBLISHED: dict[str, dict[str, tuple[int, float, int, int] | None]] = {
    "dev_appserver (n1-standard-1)": {
        "embed": (2_000_000_000, 0.36, 0, 0),
        "gob": (20, 59_716_073, 20_654_066, 100_237),
        "json": (2, 524_417_147, 85_308_624, 400_024),
        "msgp": (20, 74_252_328, 17_230_405, 200_005),
        "msgpack": (10, 175_795_553, 14_219_875, 700_012),
    },
    "App Engine us-central": {
        "embed": None,  # precompilation timed out: could not be deployed
        "gob": (10, 176_936_904, 45_133_789, 109_994),
        "json": (1, 1_467_064_292, 152_637_112, 418_667),
        "msgp": (5, 261_154_645, 46_860_164, 239_570),
        "msgpack": (3, 423_261_986, 42_541_709, 723_842),
    },
    "App Engine asia-northeast1": {
        "embed": (2_000_000_000, 0.45, 0, 0),
        "gob": (10, 129_381_925, 45_133_789, 109_994),
        "json": (2, 707_772_450, 125_792_668, 416_212),
        "msgp": (10, 145_570_381, 46_859_890, 239_569),
        "msgpack": (5, 271_111_025, 42_541_668, 723_841),
    },
}


SHORT_PLACE = dict(zip(PUBLISHED, ("dev", "us-central", "asia-ne1")))


def _records(size: int, seed: int) -> list[tuple[Any, ...]]:
    # Plain tuples: they pickle compactly and every codec takes any 5-sequence.
    return cached(f"bulkload-v1-size{size}-seed{seed}", lambda: [tuple(r) for r in dataset.generate(size, seed)])


def expected_hash(size: int, seed: int) -> str:
    """The canonical hash of the generated dataset (cached with it)."""
    return cached(f"bulkload-v1-size{size}-seed{seed}-hash", lambda: dataset.canonical_hash(_records(size, seed)))


def _verifier(size: int, seed: int, to_rows: Any) -> Any:
    from stratabench.layers.codecs.base import verify_rows

    want = expected_hash(size, seed)

    def verify(result: object) -> Integrity:
        return verify_rows(
            to_rows(result), expected_hash=want, hash_rows=dataset.canonical_hash,
            expected_rows=lambda: _records(size, seed), difference=dataset.first_difference,
        )

    return verify


@SUITES.register("bulkload")
class BulkloadSuite(Suite):
    """Load a 100,000-record asset in many formats, Python and Go (goddbench, 2018)."""

    settings = (
        Setting("bulkload.inexact", "no", "also run the modes that lose data by design (they fail their check)",
                "flag"),
        Setting("go.benchtime", "", f"Go's -benchtime; default 1s at the study's {DEFAULT_SIZE:,} records, "
                "else --min-time"),
        Setting("go.count", "", "samples per Go cell; default --samples, at most 3", "whole"),
        Setting("go.formats", "", f"Go formats; default all: {','.join(GO_FORMATS)}", "list"),
        Setting("go.variants", "", f"Go variants; default all: {','.join(GO_VARIANTS)}", "list"),
    )

    @property
    def size(self) -> int:
        return self.options.size or DEFAULT_SIZE

    @property
    def seed(self) -> int:
        return dataset.DEFAULT_SEED if self.options.seed is None else self.options.seed

    @property
    def _default_benchtime(self) -> str:
        # The study's 1 s at the study's size, to reproduce its N; at other
        # sizes the engine's own sample time, so a quick run stays quick.
        if self.size == DEFAULT_SIZE:
            return "1s"
        return f"{max(self.options.engine.min_sample_ns, 1_000_000) // 1_000_000}ms"

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
                cells.append(CellSpec("bulkload", f"{name}/{mode}", {**base, "codec": name, "mode": mode}))
        go_formats = self._go_list("go.formats", GO_FORMATS)
        for go_format, (codec, mode) in CROSS_LANGUAGE.items():
            if go_format in go_formats and codec in wanted and mode in getattr(CODECS.info(codec).cls, "modes", ()):
                cells.append(CellSpec("bulkload", f"{codec}/{mode} <- go {go_format}",
                                      {**base, "codec": codec, "mode": mode, "asset": f"go-{go_format}"}))
        for go_format in go_formats:
            for variant in self._go_list("go.variants", GO_VARIANTS):
                cells.append(CellSpec("bulkload", f"go {go_format}/{variant}",
                                      {**base, "format": go_format, "variant": variant}, language="go"))
        return cells

    def prepare(self, cell: CellSpec, workdir: Path) -> Operation:
        from stratabench.layers.codecs.base import BULKLOAD_SCHEMA, make_format

        size, seed = cell.params["size"], cell.params["seed"]
        fmt = make_format(cell.params["codec"], BULKLOAD_SCHEMA, cell.params["mode"], workdir=workdir)
        asset = workdir / "asset.bin"
        if "asset" in cell.params:
            from stratabench.adapters import golang

            golang.export(cell.params["asset"].removeprefix("go-"), seed, size, asset)
        else:
            asset.write_bytes(fmt.encode(_records(size, seed)))
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
        from stratabench.adapters import golang

        ok, reason = golang.go_available()
        if not ok and not golang.binary_path().exists():
            raise UnavailableError(f"Go rows need Go: {reason}")
        try:
            if not golang.binary_path().exists():
                golang.build(("stratabench-go",))
            go_info = golang.info()
        except StratabenchError as error:
            raise error.with_context("Go rows") from None
        by_name = {cell.name: cell for cell in cells}
        want = expected_hash(self.size, self.seed)
        count = self.config.whole("go.count") if self.config.given("go.count") else min(self.options.engine.samples, 3)
        notes = {"go_version": go_info.get("go_version"), "gomaxprocs": go_info.get("gomaxprocs")}
        try:
            for line in golang.run_bulkload(
                seed=self.seed, size=self.size, workdir=workdir,
                formats=list(dict.fromkeys(c.params["format"] for c in cells)),
                variants=list(dict.fromkeys(c.params["variant"] for c in cells)),
                benchtime=self.config.text("go.benchtime") or self._default_benchtime, count=count,
            ):
                spec = by_name.get(f"go {line['format']}/{line['variant']}")
                if spec is not None:
                    yield _go_result(spec, line, want, notes)
        except golang.GoRunError as error:
            raise error.with_context("Go adapter") from None

    def tables(self, results: Sequence[CellResult], header: dict[str, Any]) -> list[Table]:
        return [self._main_table(results), self._published_table(results), self._conclusions(results)]

    def _main_table(self, results: Sequence[CellResult]) -> Table:
        fmt = {name: METRICS[name].format for name in METRICS}
        columns = [
            Column("name", "name"), Column("lang", "lang"), Column("loops", "N", "right", format_count),
            Column("wall_ns", "ns/op", "right", fmt["wall_ns"]),
            Column("vs_json", "vs json", "right", lambda r: "-" if r is None else str(r)),
            Column("alloc_total_bytes", "B/op (Go)", "right", fmt["alloc_total_bytes"]),
            Column("allocs_total", "allocs/op (Go)", "right", format_count),
            Column("alloc_bytes", "peak B (Py)", "right", fmt["alloc_bytes"]),
            Column("retained_bytes", "retained B (Py)", "right", fmt["retained_bytes"]),
            Column("allocs", "live blocks (Py)", "right", format_count),
            Column("size_bytes", "size", "right", fmt["size_bytes"]),
            Column("hash", "hash"), Column("integrity", "integrity"), Column("status", "status"),
        ]
        problems: list[str] = []
        sizes = sorted({int(r.params.get("size", 0)) for r in results})
        table = Table(f"bulkload: {'/'.join(f'{s:,}' for s in sizes)} records, seed {self.seed} — Go and Python",
                      columns)
        baseline = {
            "go": next((r for r in results if r.cell == "go json/warm" and r.ok), None),
            "python": next((r for r in results if r.cell == "json/typed" and r.ok), None),
        }

        def order(result: CellResult) -> tuple[int, int, str]:
            if result.language == "go":
                fmt_name = result.params.get("format", "")
                index = GO_FORMATS.index(fmt_name) if fmt_name in GO_FORMATS else len(GO_FORMATS)
                return (0, index, result.cell)
            return (1, 0, "")  # Python rows keep the order they ran in

        for result in sorted(results, key=order):
            base = baseline.get(result.language)
            row: dict[str, Any] = {
                "name": result.cell, "lang": result.language, "loops": result.loops,
                "hash": result.integrity.actual[:12] if result.integrity else None,
                "integrity": integrity_text(result), "status": result.status,
                "vs_json": ratio(result.summary("wall_ns"), base.summary("wall_ns")) if base and result.ok else None,
            }
            for name in ("wall_ns", "alloc_total_bytes", "allocs_total", "alloc_bytes", "retained_bytes", "allocs",
                         "size_bytes"):
                row[name] = result.median(name)
            table.rows.append(row)
            if not result.ok:
                problems.append(f"{result.cell}: {status_text(result)}")
        hashes = {r.integrity.expected for r in results if r.integrity}
        table.notes = [
            f"expected hash: {', '.join(sorted(hashes)) or '-'}",
            "Go's B/op and allocs/op count every allocation, garbage included; Python's peak, retained and live-block "
            "figures come from a tracemalloc pass: different quantities, so different columns.",
            "vs json: ratio of medians against json in the same language (go json/warm, json/typed); "
            "~ marks a difference within noise.",
        ]
        embed = next((r for r in results if r.cell.startswith("go embed") and r.metrics), None)
        if embed is not None:
            costs = ", ".join(
                f"{label} {METRICS[name].format(embed.median(name))}"
                for name, label in (("compile_ns", "compile"), ("compile_peak_rss_bytes", "peak compiler memory"),
                                    ("binary_size_bytes", "binary"), ("init_ns", "package init"))
                if embed.median(name) is not None
            )
            table.notes.append(f"go embed build cost: {costs}")
        if any(r.params.get("codec") == "protobuf" for r in results):
            table.notes.append(
                "protobuf (upb) decodes lazily: its row times the parse, Python objects are built on first read, and "
                "its memory lives in upb's arena, which tracemalloc cannot see."
            )
        table.notes += problems
        return table

    def _published_table(self, results: Sequence[CellResult]) -> Table:
        fmt = METRICS["wall_ns"].format
        places = list(PUBLISHED)
        columns = [Column("format", "format")]
        columns += [Column(place, f"{SHORT_PLACE[place]} ns/op", "right", fmt) for place in places]
        columns += [Column("ours_warm", "here warm", "right", fmt),
                    Column("ours_fresh", "here fresh", "right", fmt),
                    Column("published_b", "dev B/op", "right", METRICS["alloc_total_bytes"].format),
                    Column("ours_b", "here B/op", "right", METRICS["alloc_total_bytes"].format),
                    Column("published_allocs", "dev allocs/op", "right", format_count),
                    Column("ours_allocs", "here allocs/op", "right", format_count)]
        table = Table("bulkload: the seed's published Go figures (100,000 records, Go 1.8, 2018) beside this machine",
                      columns)
        go = {r.cell: r for r in results if r.language == "go" and r.ok}
        for go_format in GO_FORMATS:
            row: dict[str, Any] = {"format": go_format}
            for place in places:
                figures = PUBLISHED[place][go_format]
                row[place] = None if figures is None else figures[1]
            dev = PUBLISHED[places[0]][go_format]
            warm, fresh = go.get(f"go {go_format}/warm"), go.get(f"go {go_format}/fresh")
            row.update(
                ours_warm=warm.median("wall_ns") if warm else None,
                ours_fresh=fresh.median("wall_ns") if fresh else None,
                published_b=dev[2] if dev else None, published_allocs=dev[3] if dev else None,
                ours_b=warm.median("alloc_total_bytes") if warm else None,
                ours_allocs=warm.median("allocs_total") if warm else None,
            )
            table.rows.append(row)
        table.notes = [f"{SHORT_PLACE[p]} = {p}" for p in places]
        table.notes.append("here = this machine, this run (warm: the seed's semantics; fresh: an empty destination each load).")
        table.notes.append("us-central could not deploy embed: App Engine's precompilation timed out.")
        if self.size != DEFAULT_SIZE:
            table.notes.append(f"this run used {self.size:,} records, not the study's 100,000: compare shapes, not sizes.")
        return table

    def _conclusions(self, results: Sequence[CellResult]) -> Table:
        table = Table("bulkload: the seed's conclusions on this machine",
                      [Column("n", "#", "right"), Column("conclusion", "conclusion"), Column("verdict", "verdict"),
                       Column("evidence", "evidence")])
        go = {str(r.params.get("format")): r for r in results if r.language == "go" and r.params.get("variant") == "warm"}
        table.rows = [
            {"n": 1, "conclusion": "embedding in source is by far the fastest load, but huge sources can fail to build",
             **_verdict_embed(go)},
            {"n": 2, "conclusion": "json is the slowest and uses the most memory", **_verdict_json(go)},
            {"n": 3, "conclusion": "gob beats msgp in both time and memory", **_verdict_gob(go)},
            {"n": 4, "conclusion": "json, gob and msgpack need no code generation; msgp needs a generator step",
             "verdict": "holds by construction",
             "evidence": "go/internal: msgp decodes with generated methods; json, gob and msgpack use reflection"},
        ]
        table.notes = ["verdicts compare medians of the warm variant (the seed's semantics) from this run; "
                       "'within noise' means the confidence intervals overlap. Results depend on the Go version."]
        return table


def _go_result(spec: CellSpec, line: dict[str, Any], want: str, notes: dict[str, Any]) -> CellResult:
    """A Go adapter line as a cell result, checked against the Python-side hash."""
    samples = {name: values for name, values in (line.get("samples") or {}).items() if values}
    metrics = {name: MetricResult.of([float(v) for v in values]) for name, values in samples.items()}
    if line.get("size_bytes") is not None:
        metrics["size_bytes"] = MetricResult.of([float(line["size_bytes"])])
    for name, value in (line.get("extra") or {}).items():
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
        notes={**notes, **{k: v for k, v in (line.get("extra") or {}).items() if k not in METRICS}},
    )


def _median(result: CellResult | None, name: str) -> float | None:
    return None if result is None or not result.ok else result.median(name)


def _verdict_embed(go: dict[str, CellResult]) -> dict[str, str]:
    embed = go.get("embed")
    others = [r for f, r in go.items() if f != "embed" and r.ok]
    if embed is None or not others:
        return {"verdict": "not measured", "evidence": "needs the Go rows (embed and at least one other format)"}
    if not embed.ok:
        return {"verdict": "reproduced (build failed)", "evidence": f"embed could not be built here: {embed.error}"}
    fastest_other = min(others, key=lambda r: r.median("wall_ns") or float("inf"))
    r = ratio(fastest_other.summary("wall_ns"), embed.summary("wall_ns"))
    holds = r is not None and r.value > 10 and not r.within_noise
    compile_ns = embed.median("compile_ns")
    cost = f"; built in {METRICS['compile_ns'].format(compile_ns)}" if compile_ns else ""
    return {"verdict": "reproduced" if holds else "refuted",
            "evidence": f"{fastest_other.params.get('format')} is {r} slower than embed{cost}"}


def _verdict_json(go: dict[str, CellResult]) -> dict[str, str]:
    measured = {f: r for f, r in go.items() if f != "embed" and r.ok}
    if "json" not in measured or len(measured) < 2:
        return {"verdict": "not measured", "evidence": "needs go json and another Go format"}
    slowest = max(measured, key=lambda f: measured[f].median("wall_ns") or 0)
    heaviest = max(measured, key=lambda f: measured[f].median("alloc_total_bytes") or 0)
    holds = slowest == "json" and heaviest == "json"
    part = "" if holds else f" (slowest: {slowest}; most bytes: {heaviest})"
    return {"verdict": "reproduced" if holds else "refuted",
            "evidence": f"json {METRICS['wall_ns'].format(measured['json'].median('wall_ns'))}/op, "
                        f"{METRICS['alloc_total_bytes'].format(measured['json'].median('alloc_total_bytes'))}/op{part}"}


def _verdict_gob(go: dict[str, CellResult]) -> dict[str, str]:
    """Gob beats msgp only if it wins on time and on bytes; one clear loss refutes it."""
    gob, msgp = go.get("gob"), go.get("msgp")
    if gob is None or msgp is None or not gob.ok or not msgp.ok:
        return {"verdict": "not measured", "evidence": "needs go gob and go msgp"}
    comparisons = [ratio(msgp.summary(name), gob.summary(name)) for name in ("wall_ns", "alloc_total_bytes")]
    time, memory = comparisons
    evidence = f"msgp/gob time {time or '-'}, bytes {memory or '-'} (above 1: gob wins; the seed found gob ahead in both)"
    measured = [c for c in comparisons if c is not None]
    if any(c.value < 1 and not c.within_noise for c in measured):
        return {"verdict": "refuted", "evidence": evidence}
    if all(c.value > 1 and not c.within_noise for c in measured) and len(measured) == 2:
        return {"verdict": "reproduced", "evidence": evidence}
    return {"verdict": "within noise", "evidence": evidence}
