"""Each dataset's declared ``bytes_per_record`` (the ``--size`` memory estimate) is not below what it takes.

What is measured is the cold path, the one a first run pays: the records
are generated and written to a dataset cache, in a fresh interpreter whose
cache directory is a new empty one, so the figure does not depend on what
this machine's cache holds (with the user's warm cache the records were
merely loaded, and the test passed; on a fresh machine it failed).

The cold path also has costs paid once whatever the size, such as the peak
of seeding Go's generator for bulkload (about 0.5 MB). ``--size`` multiplies
the per-record figure by sizes in the thousands to millions, where they do
not count, so enough records are generated to fill about
``_TRACED_BYTES`` at the declared figure, and a one-time cost weighs little
beside them. With 2 or 20 records they dominated: 162,897 bytes a record of
article and 26,913 of bulkload; over 25 and 2,000 records, about 70,000
and 670.

The peak is traced in a fresh interpreter also because tracemalloc counts
the allocations of every thread of the process, and in the test session's
process, another test's leftover thread would count as the dataset's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import stratabench.plugins  # noqa: F401 -- registers the datasets
from stratabench.datasets import DATASETS

#: About how many bytes of records each dataset generates while traced.
_TRACED_BYTES = 4_000_000

_MEASURE = textwrap.dedent("""
    import json, sys, tracemalloc
    import stratabench.plugins
    from stratabench.datasets import DATASETS

    peaks = {}
    for name in DATASETS.names:
        entry = DATASETS.get(name)()
        count = -(-int(sys.argv[1]) // entry.bytes_per_record)
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
def measured_bytes_per_record(tmp_path_factory: pytest.TempPathFactory) -> dict[str, float]:
    cold_cache = tmp_path_factory.mktemp("cold-dataset-cache")
    environment = {**os.environ, "STRATABENCH_CACHE_DIR": str(cold_cache)}
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(_TRACED_BYTES)],
        capture_output=True, text=True, timeout=300, check=False, env=environment,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert any(Path(cold_cache).iterdir()), "the measured path did not write the dataset cache: it was not the cold one"
    peaks: dict[str, float] = json.loads(done.stdout)
    return peaks


@pytest.mark.parametrize("name", DATASETS.names)
def test_declared_bytes_per_record_covers_the_measured_peak(
    name: str, measured_bytes_per_record: dict[str, float]
) -> None:
    declared = DATASETS.get(name)().bytes_per_record
    measured = measured_bytes_per_record[name]
    assert 0 < measured <= declared, f"{name}: {measured:,.0f} bytes a record measured, {declared:,} declared"
