"""The import layering of pyproject.toml holds, the package has no import circle, and a break is caught.

``lint-imports`` runs on a copy of the package, so the test can add a
forbidden import without touching the source tree. Circles are counted on
import-linter's own graph (grimp), type-only imports included: a module
that names another for its types alone still cannot be read, moved or
tested without it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(src: Path, cwd: Path, *options: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}  # the copy shadows the installed package
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--config", str(cwd / "pyproject.toml"), *options],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


def _circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Each set of two or more modules that import one another, directly or through others (sorted).

    The strongly connected components of the import graph (Tarjan's algorithm).
    """
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in order:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], order[imported])
        if low[module] == order[module]:
            component = [stack.pop()]
            while component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in order:
            visit(module)
    return sorted(circles)


def _copy(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(ROOT / "src" / "stratabench", tmp_path / "src" / "stratabench",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "src" / "stratabench"


def test_the_package_keeps_its_layers(tmp_path: Path) -> None:
    _copy(tmp_path)
    done = _lint(tmp_path / "src", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_the_package_has_no_import_circle() -> None:
    graph = grimp.build_graph("stratabench", cache_dir=None)
    assert _circles(graph) == []


def test_an_import_that_closes_a_circle_is_counted() -> None:
    graph = grimp.build_graph("stratabench", cache_dir=None)
    graph.add_import(importer="stratabench.layers.stores.namespaces", imported="stratabench.layers.stores.base")
    assert graph.direct_import_exists(importer="stratabench.layers.stores.base",
                                      imported="stratabench.layers.stores.namespaces")
    assert _circles(graph) == [["stratabench.layers.stores.base", "stratabench.layers.stores.namespaces"]]


@pytest.mark.parametrize(("module", "imported", "name"), [
    ("datasets/schema.py", "stratabench.layers.codecs", "CODECS"),
    # The entities dataset is handed ndb's encoder; it cannot take the mapper layer's toolkit back.
    ("datasets/entities.py", "stratabench.layers.mappers.ndb_toolkit", "NDB_ENCODER"),
])  # fmt: skip
def test_an_upward_import_breaks_the_layers(tmp_path: Path, module: str, imported: str, name: str) -> None:
    package = _copy(tmp_path)
    source = package / module
    source.write_text(source.read_text() + f"\nfrom {imported} import {name}  # noqa: E402\n")
    done = _lint(tmp_path / "src", tmp_path)
    assert done.returncode != 0
    importer = "stratabench." + module.removesuffix(".py").replace("/", ".")
    assert f"{importer} -> {imported}" in done.stdout.replace("\n", "")


def test_generic_code_naming_a_study_breaks_the_contracts(tmp_path: Path) -> None:
    package = _copy(tmp_path)
    generic = package / "report" / "generic.py"
    generic.write_text(generic.read_text() + "\n\ndef _suites() -> object:\n    from stratabench.suites import SUITES\n\n"
                      "    return SUITES\n")
    done = _lint(tmp_path / "src", tmp_path)
    assert done.returncode != 0
    assert "Generic code never names a study" in done.stdout and "BROKEN" in done.stdout


@pytest.mark.parametrize(("contract", "module", "forbidden"), [
    ("systems-below-harness", "systems/parking/protocol.py", "stratabench.engine.measure"),
    ("systems-below-harness", "systems/treestore/tree.py", "stratabench.suites.kit.suite"),
    ("systems-below-harness", "systems/lazy/keys.py", "stratabench.results.records"),
    ("systems-independent", "systems/treestore/tree.py", "stratabench.systems.parking.protocol"),
    ("systems-independent", "systems/parking/rules.py", "stratabench.systems.lazy.keys"),
])  # fmt: skip
def test_a_forbidden_import_breaks_each_systems_contract(tmp_path: Path, contract: str, module: str,
                                                         forbidden: str) -> None:  # fmt: skip
    package = _copy(tmp_path)
    source = package / module
    source.write_text(source.read_text() + f"\n\ndef _forbidden() -> object:\n    import {forbidden}\n\n"
                      f"    return {forbidden}\n")  # fmt: skip
    done = _lint(tmp_path / "src", tmp_path, "--contract", contract)
    assert done.returncode != 0, done.stdout
    importer = "stratabench." + module.removesuffix(".py").replace("/", ".")
    assert f"{importer} -> {forbidden}" in done.stdout.replace("\n", "")
