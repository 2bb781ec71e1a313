"""Go load clients against a real Redis started by stratabench's services code.

Counts, never speeds: two Go clients in a closed loop answer and verify
every read; their histograms, written by HdrHistogram's Go port, decode in
Python to exactly what the clients counted and merge losslessly with a
Python client's; an open loop keeps its schedule; a value changed behind
the clients' back is caught with the words a Python client uses.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from stratabench.load.go_clients import GoProcesses
from stratabench.load.histogram import decode, merge, summarize_histogram
from stratabench.load.records import generated_payloads
from stratabench.load.run import LoadSpec, merge_reports, run_load
from tests.integration.test_load_redis import keys_left

pytestmark = pytest.mark.server

PAYLOADS = generated_payloads(200, 100, seed=4)


@pytest.fixture(scope="module")
def go_clients(go_program: Callable[[str], Path]) -> GoProcesses:
    go_program("stratabench-go")
    return GoProcesses()


def spec(url: str, **changes: object) -> LoadSpec:
    values: dict[str, object] = {"workload": "a", "clients": 2, "warmup_s": 0.2, "duration_s": 2.0,
                                 "client_lang": "go", "run_id": f"itgo{os.getpid()}-{time.monotonic_ns()}"}
    values.update(changes)
    return LoadSpec(url, PAYLOADS, **values)  # type: ignore[arg-type]


def test_two_go_clients_in_a_closed_loop_verify_every_read_and_merge_exactly(
    server_url: Callable[[str], str], go_clients: GoProcesses
) -> None:
    url = server_url("redis")
    result = run_load(spec(url), go_clients)
    assert result.ok, result.error
    assert result.failed_checks == 0 and result.errors == 0
    assert result.reads > 0 and result.reads < result.ops  # workload a reads and updates
    merged = decode(result.histogram)
    assert merged.get_total_count() == result.ops == sum(r.ops for r in result.reports) > 0
    assert sum(decode(h).get_total_count() for h in result.interval_histograms) == result.ops
    assert len({r.pid for r in result.reports}) == 2 and os.getpid() not in {r.pid for r in result.reports}
    # Python decodes each Go histogram to what its client counted, and re-encodes it unchanged.
    for report in result.reports:
        histogram = decode(report.histogram)
        assert histogram.get_total_count() == report.ops
        again = decode(histogram.encode().decode("ascii"))
        for percentile in (50.0, 90.0, 99.0, 99.9, 100.0):
            assert again.get_value_at_percentile(percentile) == histogram.get_value_at_percentile(percentile)
    assert summarize_histogram(merged).p99_ns == result.latency.p99_ns is not None
    assert 0 < result.reports[0].busy_fraction and result.reports[0].wall_s >= 2.0
    assert keys_left(url, result) == []
    alive = [r.pid for r in result.reports if psutil.pid_exists(r.pid) and psutil.Process(r.pid).status()
             != psutil.STATUS_ZOMBIE]
    assert alive == []


def test_go_and_python_histograms_merge_losslessly(server_url: Callable[[str], str], go_clients: GoProcesses) -> None:
    url = server_url("redis")
    go = run_load(spec(url, clients=1, duration_s=1.0), go_clients)
    python = run_load(spec(url, clients=1, duration_s=1.0, client_lang="python"))
    assert go.ok and python.ok, (go.error, python.error)
    both = merge([go.histogram, python.histogram])
    assert both.get_total_count() == go.ops + python.ops
    go_h, py_h = decode(go.histogram), decode(python.histogram)
    assert both.get_max_value() == max(go_h.get_max_value(), py_h.get_max_value())
    assert both.get_min_value() == min(go_h.get_min_value(), py_h.get_min_value())
    # Merged as one configuration: the reports of both kinds of client add up.
    mixed = merge_reports(spec(url, clients=2, duration_s=1.0), [go.reports[0], python.reports[0]])
    assert decode(mixed.histogram).get_total_count() == go.ops + python.ops


def test_an_open_loop_of_go_clients_keeps_its_schedule(server_url: Callable[[str], str], go_clients: GoProcesses) -> None:
    result = run_load(spec(server_url("redis"), rate_per_s=400.0, duration_s=1.0), go_clients)
    assert result.ok, result.error
    scheduled = sum(r.scheduled or 0 for r in result.reports)
    assert scheduled == 400
    assert result.ops >= 0.95 * scheduled and not result.behind_schedule


def test_a_value_changed_behind_the_go_clients_back_is_caught(
    server_url: Callable[[str], str], go_clients: GoProcesses
) -> None:
    import redis
    import threading

    url = server_url("redis")
    configuration = spec(url, workload="get", clients=1, duration_s=1.5, warmup_s=0.5)
    client = redis.Redis.from_url(url)
    key = f"sb:{configuration.namespace}:user000000000007".encode()

    def tamper() -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not client.exists(key):
            time.sleep(0.01)
        client.set(key, b"changed")

    thread = threading.Thread(target=tamper)
    thread.start()
    try:
        result = run_load(configuration, go_clients)
    finally:
        thread.join()
        client.close()
    assert result.failed_checks > 0
    assert result.error is not None and "key user000000000007: a 7-byte value this run did not write" in result.error


def test_the_cli_runs_both_languages_and_reports_them(
    server_url: Callable[[str], str], go_program: Callable[[str], Path], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from stratabench.cli.main import main
    from stratabench.results.format import load

    go_program("stratabench-go")
    output = tmp_path / "run.jsonl"
    code = main(["load", "--store", server_url("redis"), "--client-lang", "python,go", "--clients", "1",
                 "--duration", "0.5", "--warmup", "0.1", "--records", "50", "-o", str(output), "--quiet"])
    printed = capsys.readouterr().out
    assert code == 0
    cells = load(output).cells
    assert [(c.cell, c.language, c.params["client_lang"]) for c in cells] == [
        ("get/c1/closed", "python", "python"), ("get/c1/closed/go", "go", "go")]
    assert all(c.ok and c.integrity is not None and c.integrity.ok for c in cells)
    assert "1 Python" in printed and "1 Go" in printed  # the run ends with the report `stratabench report` gives
    assert main(["report", str(output), "--format", "html", "-o", str(tmp_path / "page.html")]) == 0
