"""The treestore suite's plan (cells per backend × N × test × state) and a small real run through its workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratabench.errors import UnknownNameError, UsageError
from stratabench.options import RunOptions
from stratabench.suites.treestore.core_report import _crossing
from stratabench.suites.treestore.report import treestore_tables
from stratabench.suites.treestore.suite import FULL_SIZES, TreestoreSuite


def suite(*, full: bool = False, **settings: str) -> TreestoreSuite:
    return TreestoreSuite(RunOptions(suites=("treestore",), settings={f"treestore.{k}": v for k, v in settings.items()},
                                     run_id="20261122-230000-abcd", full=full))


def test_the_default_run_is_small_and_embedded() -> None:
    cells = suite().cells()
    assert {cell.params["backend"] for cell in cells} == {"json-file", "sqlite"}
    assert {cell.params["n"] for cell in cells} == {1000}
    # Three tries, test 11 too: the fewest that compare --fail-above can judge.
    assert {cell.params["tries"] for cell in cells} == {3}
    assert {cell.params["tries"] for cell in suite(tries="10").cells() if cell.params["test"] == 11} == {3}
    # Both commit cores; the reads (1-6) commit nothing timed, so they run on the study's core only.
    assert len(cells) == 2 * (22 + 16) and len({cell.name for cell in cells}) == len(cells)
    assert [cell.name for cell in cells[:3]] == ["json-file/1000/01-get-tree", "sqlite/1000/01-get-tree",
                                                 "json-file/1000/02-get-item"]  # interleaved, as measured
    assert [cell.name for cell in cells if cell.params["test"] == 17] == [
        "json-file/1000/17-create-an-item-cached", "sqlite/1000/17-create-an-item-cached",
        "json-file/1000/17-create-an-item-cached@incremental", "sqlite/1000/17-create-an-item-cached@incremental"]


def test_the_cores_setting_picks_the_commit_cores_and_refuses_unknown_ones() -> None:
    assert {cell.params["core"] for cell in suite(cores="sysrepo").cells()} == {"sysrepo"}
    assert {cell.params["test"] for cell in suite(cores="incremental").cells()} == set(range(7, 23))
    with pytest.raises(UsageError, match="use sysrepo and/or incremental"):
        suite(cores="sysrepo,lazy").cells()


def test_the_full_grid_is_the_references() -> None:
    cells = suite(full=True).cells()
    assert {cell.params["n"] for cell in cells} == set(FULL_SIZES)
    assert {cell.params["tries"] for cell in cells} == {10}
    assert "sqlite@disk" in {cell.params["backend"] for cell in cells}


def test_server_backends_join_when_the_run_has_their_servers() -> None:
    options = RunOptions(suites=("treestore",), stores=("redis://:secret@127.0.0.1:6379/0", "mongodb://127.0.0.1:1/"))
    cells = TreestoreSuite(options).cells()
    backends = [cell.params["backend"] for cell in cells]
    assert backends[:5] == ["json-file", "mongodb", "redis", "sqlite", "redis+search"]
    assert all("secret" not in str(cell.params["store"]) for cell in cells)


def test_the_fresh_state_mode_and_warmup_name_their_cells_apart() -> None:
    names = [cell.name for cell in suite(state="both", warmup="1").cells()]
    assert "sqlite/1000/12-remove-all-items@warmup1" in names
    assert "sqlite/1000/12-remove-all-items@fresh-state@warmup1" in names


def test_an_unknown_backend_is_a_one_line_error() -> None:
    with pytest.raises(UnknownNameError, match="known: json-file"):
        suite(backends="json-file,cassandra").cells()


def test_a_small_run_measures_every_cell_and_reports_the_studys_tables(tmp_path: Path) -> None:
    run = suite(sizes="20", tries="2", tries_many_subs="1")
    cells = run.cells()
    results = list(run.run_external(cells, tmp_path))
    assert [r.cell for r in results] == [cell.name for cell in cells]
    for result in results:
        assert result.ok, f"{result.cell}: {result.error}"
        assert result.integrity is not None and result.integrity.ok
        assert len(result.metrics["wall_ns"].samples) == result.params["tries"]
        assert result.notes["header"]["transport_codec"].startswith(("orjson", "json"))
    titles = [table.title for table in treestore_tables(results, run.options)]
    header = treestore_tables(results, run.options)[0]
    assert header.title == "treestore: result header"
    shown = {(row["scope"], row["field"]): row["value"] for row in header.rows}
    assert shown[("run", "tries at N = 20")] == "2 (many oper change_subs: 1)"
    assert shown[("run", "state mode")] == "sysrepo"
    assert shown[("sqlite", "SQLite pragmas")] == "journal_mode=WAL, synchronous=NORMAL"
    assert shown[("json-file", "its filesystem")] and shown[("sqlite", "subscriber mode")] == "threads"
    assert titles[1] == "treestore: 20 list entries, tries 2 (many oper change_subs: 1), mean seconds (state: sysrepo)"
    tables = treestore_tables(results, run.options)
    assert len(tables[1].rows) == 22 and tables[1].rows[2]["sqlite:vs"].endswith(("faster", "slower", "×"))
    gains = next(table for table in tables if "incremental core beside" in table.title)
    assert [row["n"] for row in gains.rows] == list(range(7, 23))
    assert all(row["sqlite:gain"].endswith("×") for row in gains.rows)
    crossings = next(table for table in tables if "from which N" in table.title)
    assert {(row["core"], row["backend"]) for row in crossings.rows} == {("sysrepo", "sqlite"), ("incremental", "sqlite")}
    claims = next(table for table in tables if "claims" in table.title)
    assert [row["n"] for row in claims.rows] == list(range(1, 8))
    assert claims.rows[1]["verdict"] == "not measured: needs a server"  # claim 2 is about network backends only


def test_tries_that_leave_a_wide_interval_flag_the_cell() -> None:
    from stratabench.suites.treestore.suite import _result

    cell = next(iter(TreestoreSuite(RunOptions()).cells()))
    steady = _result(cell, {"samples_ns": [1_000_000, 1_010_000, 1_005_000]}, {}, 0.1)
    carried = _result(cell, {"samples_ns": [9_000_000, 1_000_000]}, {}, 0.1)  # try 1 changes data, try 2 does not
    assert steady.status == "ok" and steady.flags == ()
    assert carried.status == "ok" and carried.flags and any("%" in flag for flag in carried.flags)


def test_a_subset_of_tests_keeps_table_order_and_bad_numbers_are_one_line() -> None:
    cells = suite(tests="17,6", cores="sysrepo").cells()
    assert [cell.name for cell in cells] == ["json-file/1000/06-get-oper-tree", "sqlite/1000/06-get-oper-tree",
                                             "json-file/1000/17-create-an-item-cached",
                                             "sqlite/1000/17-create-an-item-cached"]
    for bad in ("0", "23", "6,x", ","):
        with pytest.raises(UsageError, match="test numbers 1 to 22"):
            suite(tests=bad).cells()


@pytest.mark.parametrize(("ratios", "said"), [
    ({1000: 2.0, 10_000: 1.5}, "not up to N = 10,000"),
    ({1000: 0.5, 10_000: 0.4}, "N ≤ 1,000 (every size measured)"),
    ({1000: 2.0, 10_000: 0.5}, "N = 10,000 (crosses near 3,162)"),  # log-log: halfway, the geometric mean
    ({1000: 0.5, 10_000: 2.0}, "not at N = 10,000 (faster at N = 1,000 only)"),
])
def test_the_crossing_is_the_n_from_which_a_backend_stays_faster(ratios: dict[int, float], said: str) -> None:
    assert _crossing(ratios) == said


def test_the_growth_plot_draws_a_line_per_core(tmp_path: Path) -> None:
    from stratabench.report.charts import suite_charts
    from stratabench.suites.kit.reports import _CHARTS

    run = suite(sizes="10,20", tries="1", tests="17")
    results = list(run.run_external(run.cells(), tmp_path))
    growth = next(chart for chart in suite_charts("treestore", results, _CHARTS["treestore"])
                  if chart.title.endswith("growth with n"))
    assert growth.marks["line"] == 4  # json-file and sqlite, each on both cores
    assert "sysrepo" in growth.svg and "incremental" in growth.svg


def test_a_consumers_tries_in_the_sysrepo_mode_are_not_repeats_and_say_so_instead_of_a_flag() -> None:
    from stratabench.report.generic import NOT_REPEATS, status_text
    from stratabench.suites.treestore.suite import _result

    cells = {(c.params["test"], c.params["state"]): c for c in suite(state="both", cores="sysrepo").cells()
             if c.params["backend"] == "json-file"}
    record = {"samples_ns": [9_000_000, 100_000, 90_000]}  # try 1 removes, tries 2 and 3 commit nothing
    consumed = _result(cells[12, "sysrepo"], record, {}, 0.1)
    assert consumed.flags == () and status_text(consumed) == "not repeats: no interval"
    assert "try 1 9 ms, the 2 later median 0.1 ms" in consumed.notes[NOT_REPEATS]
    # The same figures from the fresh-state mode, where every try removes: a wide interval, flagged.
    fresh = _result(cells[12, "fresh-state"], record, {}, 0.1)
    assert NOT_REPEATS not in fresh.notes and fresh.flags and "from 3 tries" in fresh.flags[0]
    # A test whose tries repeat is flagged against the target of its more tries, with their budget.
    more = {"target": 0.05, "budget_ns": 100_000_000, "max_tries": 40}
    read = _result(cells[1, "sysrepo"], {**record, "more": more, "target_missed": True}, {}, 0.1)
    assert read.flags and "> ±5.0% target" in read.flags[0] and "0.1 s budget spent" in read.flags[0]
    assert read.notes["more_tries"] == more


def test_more_tries_where_cheap_only_with_a_tries_budget_and_never_with_given_tries_or_the_full_grid() -> None:
    # A default run takes none: back-to-back tries narrow the interval without the run's drift, and compare over
    # two default runs called the machine's swing between them a change.
    assert suite().more_tries() is None and suite()._job("json-file", 1000, "sysrepo", 0, None,
                                                         suite().cells()[:2])["more"] is None
    more = suite(tries_budget="0.1").more_tries()
    assert more is not None and more.target == 0.05 and more.budget_ns == 100_000_000
    assert suite(tries="3", tries_budget="0.1").more_tries() is None
    assert suite(full=True, tries_budget="0.1").more_tries() is None
    job = suite(tries_budget="0.1")._job("json-file", 1000, "sysrepo", 0, None, suite().cells()[:2])
    assert job["more"] == more.to_json()


def test_slices_take_each_repeated_test_after_an_untimed_try_from_workers_started_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stratabench.engine.slices import merge_slices
    from stratabench.suites.treestore import suite as module

    starts: list[str] = []
    start = module._Worker.start
    monkeypatch.setattr(module._Worker, "start", lambda self, workdir: (starts.append(self.label), start(self, workdir)))
    run = suite(sizes="20", tries="3", tests="1,7,12", backends="json-file", cores="sysrepo")
    cells = run.cells()
    session = run.slices(cells, tmp_path)
    try:
        assert session.count == 3
        slices = [list(session.run(index)) for index in range(session.count)]
    finally:
        session.close()
    assert len(starts) == 1  # one worker, started (and its backend filled) once for all slices
    assert [[part.params["test"] for part in parts] for parts in slices] == [[1, 7, 12], [1, 7], [1, 7]]
    assert all(part.ok for parts in slices for part in parts)
    # A later try in every slice, the first too: one untimed try before it (a cheap test: none is timed itself).
    assert [parts[0].notes.get("warmup_tries", 0) for parts in slices] == [1, 1, 1]
    whole = slices[0][2]  # a consumer's tries do not repeat: all three in the first slice, as without slices
    assert len(whole.metrics["wall_ns"].samples) == 3 and "not_repeats" in str(whole.notes)
    read = [parts[0] for parts in slices]
    merged = merge_slices(cells[0], list(enumerate(read)), session.notes)
    assert sorted(set(merged.metrics["wall_ns"].rounds or ())) == [0, 1, 2]
    assert merged.notes["tries"] == sum(len(part.metrics["wall_ns"].samples) for part in read)
    assert merged.notes["untimed_tries"] == 3


def test_the_full_grid_and_a_tries_budget_are_not_sliced(tmp_path: Path) -> None:
    for run in (suite(full=True), suite(tries_budget="0.1")):
        assert run.slices(run.cells(), tmp_path).count == 1


def test_a_slice_of_a_short_test_is_the_median_of_its_tries_each_timed_alone(tmp_path: Path) -> None:
    # A read at N=20 takes well under a millisecond: every slice takes the fill's most tries, and the merged cell's
    # per-round value is the median of that slice's tries, not one try at the machine's mercy.
    from stratabench.engine.slices import merge_slices
    from stratabench.suites.treestore.suite import SLICE_FILL

    run = suite(sizes="20", tries="3", tests="1", backends="json-file", cores="sysrepo")
    cells = run.cells()
    session = run.slices(cells, tmp_path)
    try:
        parts = [part for index in range(session.count) for part in session.run(index)]
    finally:
        session.close()
    assert [len(part.metrics["wall_ns"].samples) for part in parts] == [SLICE_FILL.max_tries] * 3
    merged = merge_slices(cells[0], [(10 * index, part) for index, part in enumerate(parts)], session.notes)
    medians = [sorted(part.metrics["wall_ns"].samples)[SLICE_FILL.max_tries // 2] for part in parts]
    assert merged.metrics["wall_ns"].per_round == dict(zip((0, 10, 20), medians))
    assert merged.notes["tries"] == 3 * SLICE_FILL.max_tries and "median" in merged.notes["slice_tries"]


def test_a_treestore_slice_whose_worker_died_keeps_the_other_slices_values(tmp_path: Path) -> None:
    from stratabench.engine.slices import merge_slices

    run = suite(sizes="20", tries="3", tests="1", backends="json-file", cores="sysrepo")
    cells = run.cells()
    session = run.slices(cells, tmp_path)
    try:
        first = list(session.run(0))
        session.rounds[0][0].kill()  # the worker is gone before the second slice
        second = list(session.run(1))
    finally:
        session.close()
    assert first[0].ok and not second[0].ok
    merged = merge_slices(cells[0], [(1, first[0]), (3, second[0])], session.notes)
    assert merged.status == "failed" and merged.error is not None and merged.error.startswith("slice 2 of 2")
    assert merged.metrics["wall_ns"].samples == first[0].metrics["wall_ns"].samples


def test_past_the_floor_a_cell_that_misses_the_target_takes_more_slices_from_the_same_workers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A target no three tries can meet and a first slice that seems to take 1,000 s (the workers' start), of which
    # the allowance's 10% pays for anything: the repeated test asks for nine slices, taken by run_more of that
    # cell only, from the worker of the first slice.
    import time
    from stratabench.engine.slices import SlicedRun
    from stratabench.options import EngineOptions
    from stratabench.results.records import CellResult
    from stratabench.suites.treestore import suite as module

    asked: list[tuple[int, list[str]]] = []
    run_more = module.TreestoreSlices.run_more
    monkeypatch.setattr(module.TreestoreSlices, "run_more", lambda self, index, cells: (
        asked.append((index, [cell.name for cell in cells])), run_more(self, index, cells))[1])
    starts: list[str] = []
    start = module._Worker.start
    monkeypatch.setattr(module._Worker, "start", lambda self, workdir: (starts.append(self.label), start(self, workdir)))
    run = suite(sizes="20", tests="1,12", backends="json-file", cores="sysrepo")
    cells = run.cells()
    written: list[CellResult] = []
    calls = [0]

    def now() -> float:
        calls[0] += 1
        return time.monotonic() + (1000.0 if calls[0] >= 2 else 0.0)

    sliced = SlicedRun(6, written.append, options=EngineOptions(target=1e-9), now=now)
    sliced.open(run, cells, tmp_path)
    sliced.finish(0)
    read, consumer = written
    repeated = cells[0].name
    assert asked == [(index, [repeated]) for index in range(3, 9)]  # the consumer's tries are not repeats: none
    assert read.ok and read.metrics["wall_ns"].rounds is not None
    assert sorted(set(read.metrics["wall_ns"].rounds)) == list(range(9))  # the extra slices' values merged in
    assert read.notes["slice_rounds"] == list(range(9)) and read.notes["untimed_tries"] == 9
    assert consumer.ok and len(consumer.metrics["wall_ns"].samples) == 3
    assert len(starts) == 1  # the worker of the first slice took the slices past the floor too
    # The title says what a slice is and how many the repeated tests took, not the tries a cell was given.
    title = treestore_tables(written, RunOptions())[1].title
    assert title == ("treestore: 20 list entries, 9 slices where tries repeat (a slice: one try, or the median "
                     "of tries until they time 10 ms), tries 3 elsewhere, mean seconds (state: sysrepo)")


def test_a_cell_that_meets_the_target_takes_no_slice_past_the_floor_and_its_worker_ends_clean(
        tmp_path: Path) -> None:
    from stratabench.engine.slices import SlicedRun
    from stratabench.options import EngineOptions
    from stratabench.results.records import CellResult

    run = suite(sizes="20", tests="1", backends="json-file", cores="sysrepo")
    written: list[CellResult] = []
    sliced = SlicedRun(6, written.append, options=EngineOptions(target=0.99))
    sliced.open(run, run.cells(), tmp_path)
    session = sliced.suites[0].session
    sliced.finish(0)
    assert [sorted(set(cell.metrics["wall_ns"].rounds or ())) for cell in written] == [[0, 1, 2]]
    worker = session.rounds[0][0]  # type: ignore[attr-defined]
    # Ended by its end of input (it uninstalled and exited 0), not killed.
    assert worker.process is not None and worker.process.returncode == 0
