"""Adding a store is one new file: the contract tests pick it up without editing a list.

``tests/fixtures/dumbdbm_store.py`` is such a file. It is loaded only in a
pytest of its own (``-p``), so this session's registry stays as shipped.
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.contract import test_stores

ROOT = Path(__file__).resolve().parents[2]


def store_tests() -> set[str]:
    """The contract tests that run once per registered store (they take its URL or an open store)."""
    return {
        name for name, function in vars(test_stores).items()
        if name.startswith("test_") and callable(function)
        and {"store", "store_url"} & set(inspect.signature(function).parameters)
    }


def pytest_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests/contract/test_stores.py", "-v", *args],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300, check=False,
    )


def test_a_store_in_one_file_runs_every_store_contract_test() -> None:
    done = pytest_run("-p", "tests.fixtures.dumbdbm_store", "-k", "dumbdbm or every_store_says")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    passed = set(re.findall(r"::(test_\w+)\[dumbdbm\] PASSED", done.stdout))
    assert passed == store_tests() and len(passed) >= 6
    assert "::test_every_store_says_how_to_reach_a_throwaway_instance PASSED" in done.stdout


def test_without_the_file_there_is_no_such_store() -> None:
    done = pytest_run("-k", "dumbdbm", "--collect-only", "-q")
    assert "dumbdbm" not in done.stdout.replace("-k dumbdbm", "")
