"""Each dataset's declared ``bytes_per_record`` (the ``--size`` memory estimate) is not below what it takes.

The peak is traced in a fresh interpreter: tracemalloc counts the
allocations of every thread of the process, and in the test session's own
process, after hundreds of other tests, CI once measured 24,819 bytes a
bulkload record (848 in a fresh interpreter; the run did not repeat it).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import stratabench.plugins  # noqa: F401 -- registers the datasets
from stratabench.datasets import DATASETS

_MEASURE = textwrap.dedent("""
    import json, sys, tracemalloc
    import stratabench.plugins
    from stratabench.datasets import DATASETS

    peaks = {}
    for name in DATASETS.names:
        entry = DATASETS.get(name)()
        count = 2 if entry.bytes_per_record > 10_000 else 20  # the article is one large record: a few suffice
        tracemalloc.start()
        try:
            rows = entry.rows(count, entry.default_seed)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert len(rows) == count, name
        peaks[name] = peak / count
    print(json.dumps(peaks))
""")


@pytest.fixture(scope="module")
def measured_bytes_per_record() -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", _MEASURE], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    peaks: dict[str, float] = json.loads(done.stdout)
    return peaks


@pytest.mark.parametrize("name", DATASETS.names)
def test_declared_bytes_per_record_covers_the_measured_peak(
    name: str, measured_bytes_per_record: dict[str, float]
) -> None:
    declared = DATASETS.get(name)().bytes_per_record
    measured = measured_bytes_per_record[name]
    assert 0 < measured <= declared, f"{name}: {measured:,.0f} bytes a record measured, {declared:,} declared"
