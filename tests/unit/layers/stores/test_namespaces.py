"""The names a run writes in a store, and the patterns ``stratabench clean`` recognises them by, agree."""

from __future__ import annotations

import pytest

from stratabench.errors import UsageError
from stratabench.layers.stores.namespaces import (
    NAMESPACE_PATTERN,
    RUN_IDENTIFIER_PATTERN,
    RUN_NAMESPACE_PATTERN,
    TREESTORE_NAMESPACE_PATTERN,
    cell_namespace,
    key_prefix,
    namespace_identifier,
    new_run_id,
    swept_name,
    treestore_namespace,
)
from stratabench.options import RunOptions
from stratabench.suites.treestore.suite import ORDER
from stratabench.systems.treestore.cores import CORES


def test_namespace_identifier() -> None:
    assert namespace_identifier("run_1") == "stratabench_run_1"
    changed = namespace_identifier("20261121-0545.ab")
    assert changed.startswith("stratabench_20261121_0545_ab_") and changed.isidentifier()
    assert namespace_identifier("A-b") != namespace_identifier("a_b")
    long = namespace_identifier("x" * 100)
    assert len(long) == 63 and long != namespace_identifier("x" * 99)


@pytest.mark.parametrize("run_id", [new_run_id(), "local"])
@pytest.mark.parametrize("suite", ["matrix", "cache", "entities"])
def test_what_a_run_writes_is_what_clean_recognises(run_id: str, suite: str) -> None:
    namespace = cell_namespace(RunOptions(run_id=run_id), suite, f"put redis#2 json+zstd {suite}")
    assert NAMESPACE_PATTERN.match(namespace) and RUN_NAMESPACE_PATTERN.match(namespace), namespace
    assert RUN_IDENTIFIER_PATTERN.match(namespace_identifier(namespace)), namespace_identifier(namespace)
    assert swept_name(namespace, RUN_NAMESPACE_PATTERN) == namespace
    assert key_prefix(namespace) == f"sb:{namespace}:".encode()


@pytest.mark.parametrize("name", ["stratabench_users", "20261121-054500-3f2a.matrix", "local.matrix.0123456789x",
                                  "someone_elses_table"])  # fmt: skip
def test_a_name_no_run_made_is_never_swept(name: str) -> None:
    with pytest.raises(UsageError, match="not a namespace of a stratabench run"):
        swept_name(name, RUN_NAMESPACE_PATTERN)
    with pytest.raises(UsageError):
        swept_name(name, RUN_IDENTIFIER_PATTERN)


def test_every_treestore_worker_of_a_round_gets_a_namespace_of_its_own() -> None:
    # The workers of one round (one N and state mode) run side by side: every backend and core of it.
    for run_id in ("20261121-054500-3f2a", "local"):
        for n in (10, 100_000, 1_000_000):
            for state in ("sysrepo", "fresh-state"):
                names = [treestore_namespace(run_id, backend, n, state, core) for backend in ORDER for core in CORES]
                assert len(set(names)) == len(ORDER) * len(CORES), names
                assert all(len(name) <= 40 and TREESTORE_NAMESPACE_PATTERN.match(name) for name in names), names
