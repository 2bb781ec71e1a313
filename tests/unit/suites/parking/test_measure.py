"""One configuration measured for real on SQLite: every quantity of a run is read."""

from __future__ import annotations

from pathlib import Path

from stratabench.suites.parking.measure import Configuration, measure_batch


def test_a_batch_reads_time_cpu_statements_and_log_growth_per_run(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'p.db'}"
    samples = list(measure_batch(Configuration("python-core", "sqlite", True), url, batch=1, runs=2,
                                 workdir=tmp_path))  # fmt: skip
    assert [s.failure for s in samples] == [None, None]
    for sample in samples:
        assert sample.wall_s > 0 and sample.server_cpu_s is not None and sample.server_cpu_s >= 0
        assert sample.db_cpu_s is None  # SQLite runs inside the server
        assert sample.calls["get_service_info"] == 22 and sum(sample.calls.values()) == 68
        assert sample.statements is not None and sample.statements["COMMIT"] == 32
        assert sample.statements["ROLLBACK"] == 34
        assert sample.log_bytes and sample.log_lines and sample.log_lines > 68  # each call logs its request
        assert set(sample.call_seconds) == set(sample.calls)
    # The runs are alike: the same statements each time.
    assert samples[0].statements == samples[1].statements
