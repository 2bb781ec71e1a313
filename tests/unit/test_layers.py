"""The import layering of pyproject.toml holds, and an import that breaks it is caught.

``lint-imports`` runs on a copy of the package, so the test can add a
forbidden import without touching the source tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(src: Path, cwd: Path, *options: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}  # the copy shadows the installed package
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--config", str(cwd / "pyproject.toml"), *options],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


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


def test_an_upward_import_breaks_the_layers(tmp_path: Path) -> None:
    package = _copy(tmp_path)
    schema = package / "datasets" / "schema.py"
    schema.write_text(schema.read_text() + "\nfrom stratabench.layers.codecs import CODECS  # noqa: E402\n")
    done = _lint(tmp_path / "src", tmp_path)
    assert done.returncode != 0
    assert "stratabench.datasets.schema -> stratabench.layers.codecs" in done.stdout


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
