"""The zygote: every cell in a fresh process of its own, forked from one that imported the cell's module once."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from stratabench.cli.progress import QuietProgress
from stratabench.engine.cell import run_cell
from stratabench.engine.runner import Plan, execute
from stratabench.engine.operation import CellSpec
from stratabench.engine.zygote import Zygotes
from stratabench.options import EngineOptions, RunOptions
from stratabench.results.records import CellResult

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the zygote forks")

#: A cell factory that reports the process it ran in and what earlier cells left in its module.
PROBE = '''
import os
import sys
import time

from stratabench.engine.operation import Operation

IMPORTED_BY = os.getpid()
ZYGOTE_TOKEN = os.urandom(8).hex()  # drawn once per zygote (where the module is imported): a reused pid cannot hide
CELLS_SEEN = []  # a module global each cell appends to: a fresh process starts with it empty


class Probe:
    def __init__(self, options):
        self.options = options

    def prepare(self, cell, workdir):
        CELLS_SEEN.append(cell.name)
        if cell.params.get("hang"):
            time.sleep(600)
        if cell.params.get("crash"):
            os._exit(3)
        if cell.params.get("segfault"):
            import ctypes

            ctypes.string_at(0)  # a library's crash: SIGSEGV, no Python exception
        if os.environ.get("PROBE_LOG"):
            with open(os.environ["PROBE_LOG"], "a") as log:
                log.write(f"{cell.name} {ZYGOTE_TOKEN}\\n")
        notes = {"pid": os.getpid(), "ppid": os.getppid(), "imported_by": IMPORTED_BY,
                 "seen": list(CELLS_SEEN), "env": os.environ.get("PROBE_ENV"),
                 "shared": os.environ.get("STRATABENCH_SHARED_DIR"),
                 "wave_imported": "wave" in sys.modules,
                 "still_there": [pid for pid in cell.params.get("previous", ()) if os.path.exists(f"/proc/{pid}")]}
        return Operation(call=lambda: None, trace_memory=False, notes=notes)
'''

OPTIONS = RunOptions(engine=EngineOptions(samples=1, warmups=0, min_sample_ns=0, memory_samples=0,
                                          cell_timeout_s=20))


class NoExternal:
    def run_external(self, cells: Sequence[CellSpec], workdir: Path) -> Iterator[CellResult]:
        raise AssertionError("no external cells planned")


class Sink:
    def write(self, result: CellResult) -> None:
        pass

    def write_round(self, record: dict[str, Any]) -> None:
        pass


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "zygote_probe.py").write_text(textwrap.dedent(PROBE))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    return "zygote_probe:Probe"


def cell(factory: str, name: str, env: dict[str, str] | None = None, **params: object) -> CellSpec:
    return CellSpec("probe", name, params, "python", env or {}, factory)


def test_each_cell_runs_in_a_fresh_child_of_the_zygote_that_imported_its_module(probe: str) -> None:
    with Zygotes([probe.partition(":")[0]]) as zygotes:
        first = run_cell(cell(probe, "first"), OPTIONS, zygotes)
        second = run_cell(cell(probe, "second"), OPTIONS, zygotes)
        zygote = zygotes.for_env({}).pid
    assert first.ok and second.ok, (first.error, second.error)
    assert first.notes["pid"] != second.notes["pid"]
    assert {first.notes["pid"], second.notes["pid"]}.isdisjoint({os.getpid(), zygote})
    assert first.notes["ppid"] == second.notes["ppid"] == zygote
    # The module was imported once, in the zygote, before any cell ran...
    assert first.notes["imported_by"] == second.notes["imported_by"] == zygote
    # ...and what one cell did to its globals is not seen by the next.
    assert first.notes["seen"] == ["first"] and second.notes["seen"] == ["second"]


def test_a_run_forks_each_round_from_new_zygotes_and_the_cells_of_one_round_from_the_same(
        probe: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A zygote's layout and hash seed are in every worker it forks: new ones each round put them between rounds.
    log = tmp_path / "zygotes.log"
    monkeypatch.setenv("PROBE_LOG", str(log))
    plan = Plan([(NoExternal(), [cell(probe, "first"), cell(probe, "second")])])
    options = RunOptions(engine=replace(OPTIONS.engine, samples=3))
    results = execute(plan, options, Sink(), QuietProgress(io.StringIO()))
    assert [result.ok for result in results] == [True, True], [result.error for result in results]
    visits = [line.split() for line in log.read_text().splitlines()]
    assert sorted(name for name, _ in visits) == ["first"] * 3 + ["second"] * 3
    rounds = [{token for _, token in visits[number:number + 2]} for number in range(0, 6, 2)]
    assert [len(tokens) for tokens in rounds] == [1, 1, 1]  # both cells of a round: one zygote
    assert len(set.union(*rounds)) == 3  # three rounds: three zygotes


def test_every_worker_of_every_round_and_environment_shares_one_directory_removed_on_close(probe: str) -> None:
    with Zygotes([probe.partition(":")[0]]) as zygotes:
        visits = [run_cell(cell(probe, f"round {number}", env), OPTIONS, zygotes.for_round(number))
                  for number in (0, 1) for env in ({}, {"PROBE_ENV": "set"})]
        kept, visits_dir = zygotes.shared_dir, zygotes.visits_dir
        assert kept.is_dir()  # a new round's zygotes, the same directory
        assert list(visits_dir.iterdir()) == []  # each visit's result and log, removed once read
    assert [visit.ok for visit in visits] == [True] * 4, [visit.error for visit in visits]
    assert {visit.notes["shared"] for visit in visits} == {str(kept)}
    assert len({visit.notes["ppid"] for visit in visits}) == 4  # two rounds of two environments: four zygotes
    assert not kept.exists() and not visits_dir.exists()


def test_a_cell_with_its_own_environment_gets_a_zygote_of_its_own(probe: str) -> None:
    with Zygotes([probe.partition(":")[0]]) as zygotes:
        plain = run_cell(cell(probe, "plain"), OPTIONS, zygotes)
        special = run_cell(cell(probe, "special", {"PROBE_ENV": "set"}), OPTIONS, zygotes)
    assert (plain.notes["env"], special.notes["env"]) == (None, "set")
    assert plain.notes["ppid"] != special.notes["ppid"]


def test_a_hung_cell_is_killed_at_its_timeout_and_a_crashed_one_reported_then_the_next_runs(probe: str) -> None:
    options = RunOptions(engine=EngineOptions(samples=1, warmups=0, min_sample_ns=0, memory_samples=0,
                                              cell_timeout_s=2))
    with Zygotes([probe.partition(":")[0]]) as zygotes:
        hung = run_cell(cell(probe, "hung", hang=True), options, zygotes)
        crashed = run_cell(cell(probe, "crashed", crash=True), options, zygotes)
        after = run_cell(cell(probe, "after"), options, zygotes)
    assert hung.status == "failed" and hung.error is not None and hung.error.startswith("timed out after 2 s")
    assert crashed.status == "failed" and crashed.error == "worker process exited with code 3 and no result: no output"
    assert after.ok and after.notes["seen"] == ["after"]


def test_a_worker_killed_by_a_signal_says_where(probe: str) -> None:
    spawn = RunOptions(engine=EngineOptions(samples=1, warmups=0, min_sample_ns=0, memory_samples=0, fork=False))
    with Zygotes([probe.partition(":")[0]]) as zygotes:
        for options in (OPTIONS, spawn):
            crashed = run_cell(cell(probe, "segfault", segfault=True), options, zygotes)
            assert crashed.status == "failed" and crashed.error is not None
            assert crashed.error.startswith("worker process exited with code -11 and no result: "
                                            "Fatal Python error: Segmentation fault at File "), crashed.error
            assert "line " in crashed.error and crashed.error.count(" < File ") == 1  # two frames, innermost first
            assert "in string_at < File " in crashed.error and crashed.error.endswith("in prepare"), crashed.error


def test_spawn_starts_a_new_interpreter_per_cell(probe: str) -> None:
    spawn = RunOptions(engine=EngineOptions(samples=1, warmups=0, min_sample_ns=0, memory_samples=0, fork=False))
    with Zygotes([probe.partition(":")[0]]) as zygotes:
        result = run_cell(cell(probe, "spawned"), spawn, zygotes)
    assert result.ok and result.notes["imported_by"] == result.notes["pid"]  # imported in its own interpreter
    assert result.notes["ppid"] == os.getpid()


def test_closing_the_zygotes_mid_cell_ends_the_worker_and_the_zygote(probe: str) -> None:
    import threading
    import time

    import psutil

    zygotes = Zygotes([probe.partition(":")[0]])
    zygote = zygotes.for_env({})
    running = threading.Thread(target=run_cell, args=(cell(probe, "hung", hang=True), OPTIONS, zygotes))
    running.start()
    deadline = time.monotonic() + 20
    while not psutil.Process(zygote.pid).children() and time.monotonic() < deadline:
        time.sleep(0.05)
    (child,) = psutil.Process(zygote.pid).children()
    started = time.monotonic()
    zygotes.close()  # as an interrupted run does
    running.join(timeout=20)
    assert time.monotonic() - started < 4  # not the 20 s timeout, nor the 5 s grace
    assert not psutil.pid_exists(zygote.pid)
    assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE


def test_a_worker_s_exit_runs_after_its_answer_and_before_anything_else_is_measured(probe: str) -> None:
    # The zygote answers as soon as a worker has written its result; its exit (freeing its memory) overlaps the
    # run's reading and the next fork, and neither the next worker nor the parent's own measuring runs beside it.
    from stratabench.engine.zygote import settle

    with Zygotes([probe.partition(":")[0]]) as zygotes:
        first = run_cell(cell(probe, "first"), OPTIONS, zygotes)
        assert os.path.exists(f"/proc/{first.notes['pid']}")  # done, not yet reaped: the zygote waits when it must
        second = run_cell(cell(probe, "second", previous=[first.notes["pid"]]), OPTIONS, zygotes)
        other = run_cell(cell(probe, "other env", {"PROBE_ENV": "set"}, previous=[second.notes["pid"]]), OPTIONS,
                         zygotes)
        settle()
        last_gone = not os.path.exists(f"/proc/{other.notes['pid']}")
    assert [first.ok, second.ok, other.ok] == [True] * 3, [first.error, second.error, other.error]
    assert second.notes["still_there"] == []  # the same zygote's previous worker was gone when it started
    assert other.notes["still_there"] == []  # so was another zygote's
    assert last_gone


def test_a_slow_reader_never_waits_for_an_answer_it_already_read(probe: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # A worker that ends at once leaves both its answers (fork, exit) in the pipe
    # before a busy run reads the first; a buffered reader would take both, and
    # select() would then wait on the pipe for the one already read.
    import select as real_select
    import time
    import types

    import stratabench.engine.zygote as zygote_module

    def slow_select(*args: object) -> object:
        time.sleep(0.3)
        return real_select.select(*args)  # type: ignore[arg-type]

    options = RunOptions(engine=EngineOptions(samples=1, warmups=0, min_sample_ns=0, memory_samples=0,
                                              cell_timeout_s=5))
    with Zygotes([probe.partition(":")[0]]) as zygotes:
        zygotes.for_env({})
        monkeypatch.setattr(zygote_module, "select", types.SimpleNamespace(select=slow_select))
        results = [run_cell(cell(probe, f"quick {n}"), options, zygotes) for n in range(3)]
    assert [r.error for r in results if not r.ok] == []


def test_preload_imports_what_a_factory_class_names_by_tuple_or_class_method(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stratabench.engine.worker import _preload

    (tmp_path / "factory_with_preload.py").write_text(
        "class ByTuple:\n    preload = ('colorsys',)\n\n"
        "class ByMethod:\n    @classmethod\n    def preload(cls):\n        return ('sndhdr_missing_module', 'wave')\n\n"
        "class Broken:\n    @classmethod\n    def preload(cls):\n        raise RuntimeError('a factory that cannot say')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("colorsys", "wave"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    _preload(["factory_with_preload"])
    assert "colorsys" in sys.modules and "wave" in sys.modules  # a missing module or a broken factory skips only itself


def test_a_suite_preloads_its_requirements_and_the_installed_plugins() -> None:
    from stratabench.suites.entities.suite import EntitiesSuite

    modules = EntitiesSuite.preload()
    assert "google.cloud.ndb" in modules  # two seconds of imports each cell would pay
    assert "stratabench.layers.codecs.msgpack" in modules and "msgpack" in modules
    assert "stratabench.suites.entities.operations" in modules  # the study's own modules, compiled once
    assert "stratabench.systems.lazy" in modules
    # A server store's plugin module, but its driver only when the run names such a store (store_drivers).
    assert "stratabench.layers.stores.redis" in modules and "redis" not in modules and "pymongo" not in modules


def test_what_a_visit_imports_making_an_ndb_client_an_lz4_compressor_or_opening_a_store_is_preloaded() -> None:
    # Each was imported by every visit that made one (3, 2 and 1 ms a visit): now once, by the zygote.
    script = textwrap.dedent("""
        import importlib, sys
        from stratabench.suites.entities.suite import EntitiesSuite
        for name in EntitiesSuite.preload():
            importlib.import_module(name)
        before = set(sys.modules)
        from stratabench.layers.compressors.lz4 import Lz4Compressor
        from stratabench.layers.mappers.ndb_toolkit import ndb_context
        from stratabench.layers.stores import open_store
        ndb_context()
        Lz4Compressor().compress(b"x")
        open_store("memory://", namespace="preload-test").close()
        print(sorted(set(sys.modules) - before))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_run_naming_a_server_store_preloads_its_driver_in_every_zygote(probe: str) -> None:
    from stratabench.suites.kit.plan import plan_run, store_drivers

    options = RunOptions(stores=("redis://127.0.0.1:1/0", "sqlite:///tmp/unused.db"))
    assert store_drivers(options) == ("stratabench.layers.stores.redis", "redis", "stratabench.layers.stores.sqlite")
    assert store_drivers(RunOptions()) == ()
    assert plan_run(replace(options, suites=("cache",)), QuietProgress(io.StringIO())).preload == store_drivers(options)
    for preload, imported in (((), False), (("wave",), True)):
        plan = Plan([(NoExternal(), [cell(probe, "only")])], preload=preload)
        [result] = execute(plan, OPTIONS, Sink(), QuietProgress(io.StringIO()))
        assert result.ok and result.notes["wave_imported"] is imported, (preload, result.error)


def test_warm_runs_a_factory_class_method_once_and_skips_instance_methods_and_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from stratabench.engine.worker import _preload

    (tmp_path / "factory_with_warm.py").write_text(
        "BUILT = []\n\n"
        "class Warms:\n    @classmethod\n    def warm(cls):\n        BUILT.append(cls.__name__)\n\n"
        "class InstanceOnly:\n    def warm(self):\n        BUILT.append('instance')\n\n"
        "class Fails:\n    @classmethod\n    def warm(cls):\n        raise RuntimeError('cannot build here')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    _preload(["factory_with_warm"])
    assert sys.modules["factory_with_warm"].BUILT == ["Warms"]
    assert "cannot build here" in capsys.readouterr().err  # said, and the zygote goes on


def test_the_entities_and_cache_suites_warm_the_default_run_s_datasets() -> None:
    from stratabench.datasets import entities
    from stratabench.suites.cache.suite import CacheSuite, _dataset
    from stratabench.suites.entities.suite import EntitiesSuite

    entities._generate.cache_clear()
    _dataset.cache_clear()
    EntitiesSuite.warm()
    CacheSuite.warm()
    assert entities._generate.cache_info().currsize == len(entities.SCHEMAS) * len(entities.WIDTHS) * len(
        entities.FLAVOURS)
    assert _dataset.cache_info().currsize == 2


def test_a_round_s_zygotes_and_the_next_round_s_start_together_and_are_all_ready_before_the_round_goes_on(
        probe: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import stratabench.engine.zygote as zygote_module

    events: list[str] = []
    real_popen, real_answer = zygote_module.popen_tied, zygote_module.Zygote._answer

    def popen(args: Any, **kwargs: Any) -> Any:
        events.append("start " + kwargs["env"].get("PROBE_ENV", "-"))
        return real_popen(args, **kwargs)

    def answer(self: Any, timeout_s: float | None, what: str) -> dict[str, Any]:
        if what == "ready":
            events.append("ready")
        return real_answer(self, timeout_s, what)

    monkeypatch.setattr(zygote_module, "popen_tied", popen)
    monkeypatch.setattr(zygote_module.Zygote, "_answer", answer)
    monkeypatch.delenv("PROBE_ENV", raising=False)
    with Zygotes([probe.partition(":")[0]]) as zygotes:
        zygotes.for_round(0).start([{}, {"PROBE_ENV": "set"}, {}])
        # The round's two, and beside them the next round's two; all ready before the round goes on.
        started = ["start -", "start set", "start -", "start set", "ready", "ready", "ready", "ready"]
        assert events == started
        plain = run_cell(cell(probe, "plain"), OPTIONS, zygotes.for_round(0))
        special = run_cell(cell(probe, "special", {"PROBE_ENV": "set"}), OPTIONS, zygotes.for_round(0))
        assert events == started  # the round's cells forked from its two
        zygotes.for_round(1).start([{}])
        assert events == started  # round 1's zygote was started beside round 0's: nothing to wait for
        again = run_cell(cell(probe, "plain"), OPTIONS, zygotes.for_round(1))
        zygotes.for_round(2).start([{}])
        # A new round that starts its zygote starts the next round's beside it, only for the environments it needs.
        assert events[8:] == ["start -", "start -", "ready", "ready"]
    assert plain.ok and special.ok and (plain.notes["env"], special.notes["env"]) == (None, "set")
    assert again.ok and again.notes["ppid"] != plain.notes["ppid"]  # each round forks from zygotes of its own


def test_a_zygote_that_dies_starting_fails_its_cells_not_the_round(probe: str) -> None:
    with Zygotes([probe.partition(":")[0]], python="/bin/false") as zygotes:
        zygotes.for_round(0).start([{}])  # does not raise: the round goes on
        result = run_cell(cell(probe, "orphan"), OPTIONS, zygotes.for_round(0))
    assert result.status == "failed" and "zygote process exited" in (result.error or ""), result.error
