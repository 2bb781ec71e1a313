"""Reports people read: every suite's report, rendered from real small runs, fits 100 columns and speaks
the reader's words (none of this project's own: see the wording rule in suites/kit/findings.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stratabench.cli.progress import QuietProgress
from stratabench.engine.runner import Plan, execute
from stratabench.options import EngineOptions, RunOptions
from stratabench.report.formats import REPORTERS
from stratabench.report.formats.terminal import TerminalReporter
from stratabench.results.environment import environment
from stratabench.results.format import ResultsFile, header_record, load
from stratabench.results.records import CellResult
from stratabench.results.writer import ResultsWriter
from stratabench.suites import SUITES
from stratabench.suites.kit.reports import run_report
from tests.golden_files import GOLDEN
from tests.unit.load.reports import write_load_run

FAST = EngineOptions(samples=3, warmups=0, min_sample_ns=1_000_000, memory_samples=1, isolate=False)

#: Each suite, small: the options of a real run that measures a few of its cells in this process.
SMALL_RUNS = {
    "bulkload": RunOptions(suites=("bulkload",), size=200, codecs=("json", "pickle", "embed"),
                           settings={"go.formats": "gob,json"}, engine=FAST),
    "cache": RunOptions(suites=("cache",), size=40, codecs=("pickle",), compressors=("none", "zlib"), engine=FAST,
                        settings={"cache.tiers": "memory,sqlite", "cache.operations": "get_one,get_list"}),
    "entities": RunOptions(suites=("entities",), engine=FAST, settings={
        "entities.widths": "10", "entities.schemas": "text", "entities.flavours": "model",
        "entities.python_protobuf": "no", "entities.stores": "memory", "entities.cells": "get20"}),
    "matrix": RunOptions(suites=("matrix",), size=30, codecs=("json", "orjson"), compressors=("none", "zstd"),
                         settings={"matrix.dataset": "comments", "matrix.stores": "memory,lmdb",
                                   "matrix.operations": "put,get_many"}, engine=FAST),
    "treestore": RunOptions(suites=("treestore",), engine=FAST, settings={
        "treestore.sizes": "20,60", "treestore.tests": "1,4,7,12,16", "treestore.backends": "json-file,sqlite",
        "treestore.tries": "2"}),
    "parking": RunOptions(suites=("parking",), engine=FAST, settings={
        "parking.servers": "python-orm,python-core", "parking.logging": "off,on"}),
}

#: Per suite, the parameters an answer chooses between: two cells it compares may differ in these and
#: nothing else (not the operation, the size, the database or any other setting).
CHOICES = {
    "bulkload": {"codec", "mode", "format", "lang", "variant", "step"},  # step: a lazy format's read-every-field row
    "cache": {"tier", "store", "kind", "encoding", "representation", "codec", "compression", "url"},
    "entities": {"path", "read", "mapper"},
    "matrix": {"store", "kind", "url", "codec", "compression"},
    "treestore": {"backend", "store"},
}
#: Parking compares servers or logging settings, one at a time: never a cell that differs in both.
ONE_OF = {"parking": ({"server"}, {"logging"})}

#: Words from inside the project that a reader cannot know, and notations a reader should not have to decode.
FORBIDDEN = ("the seed's", "seed's", "spec §", "§", "probe", "not implemented", "go/internal", "specs/", "ns/op")
#: The baseline is marked one way: ``1.00× (base)``; never ``1× ~``, ``1× (base)`` or a bare ``base``.
OTHER_BASELINES = re.compile(r"(?<![\d.])1× ~|(?<![\d.])1× \(base\)|\|\s*base\s*\||  base(  |$)", re.MULTILINE)
SCIENTIFIC = re.compile(r"(?<![0-9a-f])\d(\.\d+)?e[+-]\d+(?![0-9a-f])")


@pytest.fixture(scope="module")
def small_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ResultsFile]:
    """Each suite's small run, written to a results file and read back as a report would."""
    runs = {}
    for name, options in SMALL_RUNS.items():
        path = tmp_path_factory.mktemp(name) / "run.jsonl"
        suite = SUITES.get(name)(options)
        header = header_record(name, "2026-11-22T00:00:00+00:00", environment(), options.to_json(), {})
        with ResultsWriter(path, header) as writer:
            execute(Plan([(suite, suite.cells())]), options, writer, QuietProgress())
        runs[name] = load(path)
    runs["golden"] = load(GOLDEN / "results" / "v1.jsonl")
    # A load run needs a server: its cells come from made-up client reports, through the same writer.
    load_path = tmp_path_factory.mktemp("load") / "run.jsonl"
    write_load_run(load_path)
    runs["load"] = load(load_path)
    return runs


def _rendered(results: ResultsFile, fmt: str, detail: str = "full") -> str:
    reporter = TerminalReporter(100) if fmt == "terminal" else REPORTERS.get(fmt)()
    return reporter.render_report(run_report(results.cells, results.header, detail))  # type: ignore[arg-type]


@pytest.mark.parametrize("run", [*SMALL_RUNS, "golden", "load"])
def test_every_report_fits_100_columns(small_runs: dict[str, ResultsFile], run: str) -> None:
    for detail in ("summary", "tables", "full"):
        text = _rendered(small_runs[run], "terminal", detail)
        widest = max(text.splitlines(), key=len)
        assert len(widest) <= 100, f"{run} {detail}: {len(widest)} columns: {widest}"


@pytest.mark.parametrize("run", [*SMALL_RUNS, "golden", "load"])
@pytest.mark.parametrize("fmt", REPORTERS.names)
def test_no_word_from_inside_the_project(small_runs: dict[str, ResultsFile], run: str, fmt: str) -> None:
    text = _rendered(small_runs[run], fmt)
    found = [word for word in FORBIDDEN if word.lower() in text.lower()]
    assert not found, f"{run} {fmt}: {found}"
    assert not OTHER_BASELINES.search(text), OTHER_BASELINES.search(text)


@pytest.mark.parametrize("run", [*SMALL_RUNS, "golden", "load"])
def test_readable_numbers_units_and_status(small_runs: dict[str, ResultsFile], run: str) -> None:
    report = run_report(small_runs[run].cells, small_runs[run].header, "full")
    text = TerminalReporter(100).render_report(report)
    assert not SCIENTIFIC.search(text), SCIENTIFIC.search(text)
    for table in report.tables():
        headers = [column.header for column in table.columns]
        assert "N" not in headers, table.title
        for row in table.formatted():
            for header, cell in zip(headers, row):
                if header in ("status", "integrity", "hash"):
                    assert cell != "ok", f"{table.title}: {header} says ok; a status lists only exceptions"


@pytest.mark.parametrize("run", list(SMALL_RUNS))
def test_each_suite_opens_with_its_answer(small_runs: dict[str, ResultsFile], run: str) -> None:
    report = run_report(small_runs[run].cells, small_runs[run].header, "summary")
    (section,) = report.sections
    assert section.answer is not None and (section.answer.bests or section.answer.picks), run
    tables = report.tables()
    assert tables[0].title == "where and when this was measured"
    assert tables[1].title.startswith(f"{run}: the answer")
    assert len(tables) == 2, "summary shows the provenance and the answer only"


def test_a_unmeasured_finding_shows_nothing_measured(small_runs: dict[str, ResultsFile]) -> None:
    """The cache run had no memcached: its findings that need one must not show a measured ratio."""
    report = run_report(small_runs["cache"].cells, small_runs["cache"].header)
    (findings,) = [t for t in report.tables() if "found, checked" in t.title]
    unmeasured = [row for row in findings.rows if str(row["verdict"]).startswith("not measured")]
    assert unmeasured, "this run has no memcached, so some findings cannot be measured"
    assert all(row["here"] == "" for row in unmeasured)


def test_exports_keep_numbers_and_intervals(small_runs: dict[str, ResultsFile]) -> None:
    import csv
    import io
    import json

    results = small_runs["bulkload"]
    data = json.loads(_rendered(results, "json", "tables"))
    ratios = [row["vs_json"] for suite in data["suites"] for table in suite["tables"] for row in table["rows"]
              if "vs_json" in row and row["vs_json"] is not None]
    assert ratios and all(isinstance(value, float) for value in ratios)
    cell = next(c for c in data["cells"] if c["cell"] == "json/typed")
    assert cell["wall_ns_ci_low"] <= cell["wall_ns_median"] <= cell["wall_ns_ci_high"]
    assert 0 < cell["wall_ns_ci_level"] <= 1
    rows = list(csv.reader(io.StringIO(_rendered(results, "csv", "tables"))))
    header = next(row for row in rows if "vs_json" in row)
    assert "vs_json_within_noise" in header
    column = header.index("vs_json")
    block = rows[rows.index(header) + 1:]
    values = [row[column] for row in block if len(row) == len(header) and row[0] == block[0][0] and row[column]]
    assert values and all(float(value) > 0 for value in values)  # numbers, never "0.132×"


def test_markdown_report_has_the_provenance_first(small_runs: dict[str, ResultsFile], tmp_path: Path) -> None:
    text = _rendered(small_runs["matrix"], "markdown", "summary")
    assert text.startswith("### where and when this was measured")
    assert "CPython" in text and "revision" in text


def _differing(cells: list[CellResult]) -> set[str]:
    keys = {key for cell in cells for key in cell.params}
    return {key for key in keys if len({repr(cell.params.get(key)) for cell in cells}) > 1}


@pytest.mark.parametrize("run", list(SMALL_RUNS))
def test_no_answer_ranks_cells_of_different_operations_sizes_or_settings(
        small_runs: dict[str, ResultsFile], run: str) -> None:
    """Every best is chosen among cells of one operation, size and setting; every pick compares cells that
    differ in the choice alone (for parking: the server, or the logging, never both)."""
    report = run_report(small_runs[run].cells, small_runs[run].header, "summary")
    (section,) = report.sections
    answer = section.answer
    assert answer is not None
    groups: list[list[CellResult]] = []
    for best in answer.bests:
        ranked = [*best.winners, *([best.runner_up] if best.runner_up else [])]
        assert all(c.cell is not None for c in ranked), f"{run}: {best.label}: a candidate without its cell"
        groups.append([c.cell for c in ranked if c.cell is not None])
    for pick in answer.picks:
        assert pick.compared, f"{run}: {pick.setting}: a pick that names no cells"
        groups += [list(pair) for pair in pick.compared]
    assert groups, f"{run}: the answer compares nothing"
    for cells in groups:
        differing = _differing(cells)
        if run in ONE_OF:
            assert any(differing == allowed for allowed in ONE_OF[run]), f"{run}: {[c.cell for c in cells]}"
        else:
            assert differing <= CHOICES[run], f"{run}: {[c.cell for c in cells]} differ in {differing - CHOICES[run]}"


def test_too_few_runs_are_said_not_judged(small_runs: dict[str, ResultsFile]) -> None:
    """One parking run a configuration judges nothing: the answer and the targets say so, with what to run."""
    report = run_report(small_runs["parking"].cells, small_runs["parking"].header, "tables")
    text = TerminalReporter(100).render_report(report)
    (section,) = report.sections
    assert section.answer is not None
    timed = [pick for pick in section.answer.picks if pick.ratio is not None]
    assert timed and all(pick.sure.startswith("too few to judge") for pick in timed)
    assert "--set parking.runs=20" in text
    assert "missed" not in text and "refuted" not in text
