"""Each dataset's declared ``bytes_per_record`` (the ``--size`` memory estimate) is not below what it takes."""

from __future__ import annotations

import tracemalloc

import pytest

import stratabench.plugins  # noqa: F401 -- registers the datasets
from stratabench.datasets import DATASETS


@pytest.mark.parametrize("name", DATASETS.names)
def test_declared_bytes_per_record_covers_the_measured_peak(name: str) -> None:
    entry = DATASETS.get(name)()
    count = 2 if entry.bytes_per_record > 10_000 else 20  # the article is one large record: a few suffice
    tracemalloc.start()
    try:
        rows = entry.rows(count, entry.default_seed)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(rows) == count
    assert peak / count <= entry.bytes_per_record, f"{name}: {peak / count:,.0f} bytes a record measured"
