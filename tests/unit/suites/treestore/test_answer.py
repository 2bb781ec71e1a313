"""The treestore answer: its one-sentence verdict per family names every setting a row is held at."""

from __future__ import annotations

from stratabench.options import RunOptions
from stratabench.results.records import CellResult, MetricResult
from stratabench.suites.treestore.answer import treestore_answer


def _cell(backend: str, core: str, wall_ns: float) -> CellResult:
    params = {"backend": backend, "n": 2000, "test": 4, "core": core, "state": "fresh-state"}
    return CellResult("treestore", f"{backend}/2000/04@{core}", params, "python", "ok",
                      metrics={"wall_ns": MetricResult.of([wall_ns] * 6, list(range(6)))})


def test_the_verdict_names_the_core_of_each_part_when_several_were_run() -> None:
    found = treestore_answer([_cell("json-file", "sysrepo", 1000.0), _cell("sqlite", "sysrepo", 3000.0),
                              _cell("json-file", "incremental", 4000.0), _cell("sqlite", "incremental", 2000.0)],
                             RunOptions(suites=("treestore",)))
    assert found is not None
    (verdict,) = [line for line in found.summary if line.startswith("cached reads:")]
    assert verdict == ("cached reads: one JSON file or per-node diffs? per-node diffs (sqlite) at 2,000 list entries "
                       "(core incremental): 2.00× faster than json-file [2.00-2.00×, 96.87%, 6 pairs]; one JSON file "
                       "at 2,000 list entries (core sysrepo): 3.00× faster than sqlite, the best per-node layout "
                       "[3.00-3.00×, 96.87%, 6 pairs]."), verdict
