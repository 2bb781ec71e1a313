from __future__ import annotations

from dataclasses import replace

import pytest

from stratabench.errors import UnknownNameError, UsageError
from stratabench.load.histogram import decode
from stratabench.load.client import ClientReport
from stratabench.load.run import LoadSpec, interrupted_result, merge_reports
from tests.unit.load.reports import SPEC, report

PAYLOADS = (b"a", b"b", b"c", b"d")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"clients": -2}, "--clients must be at least 1, not -2"),
        ({"clients": 0}, "--clients must be at least 1, not 0"),
        ({"rate_per_s": 0.0}, "--rate must be a positive number, not 0; give requests per second, or leave --rate out"),
        ({"rate_per_s": -5.0}, "--rate must be a positive number, not -5;"),
        ({"rate_per_s": float("nan")}, "--rate must be a positive number, not nan;"),
        ({"duration_s": 0.0}, "--duration must be a positive number, not 0;"),
        ({"warmup_s": -1.0}, "--warmup must be zero or more seconds, not -1"),
        ({"clients": 5}, "5 clients need at least 5 records, one key each, and there are 4;"),
    ],
)
def test_bad_numbers_are_one_line_when_the_spec_is_built(changes: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        LoadSpec("redis://127.0.0.1:6379/0", PAYLOADS, **changes)  # type: ignore[arg-type]
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_an_unknown_workload_is_refused_when_the_spec_is_built() -> None:
    with pytest.raises(UnknownNameError):
        LoadSpec("redis://127.0.0.1:6379/0", PAYLOADS, workload="z")


def test_clients_own_disjoint_keys_and_share_the_rate() -> None:
    spec = LoadSpec("redis://127.0.0.1:6379/0", tuple(bytes([n]) for n in range(10)), clients=3, rate_per_s=300.0)
    specs = spec.client_specs()
    plans = [s.requests for s in specs]
    assert [p.first_key for p in plans] == [0, 3, 6]  # type: ignore[attr-defined]
    assert b"".join(b for p in plans for b in p.payloads) == bytes(range(10))  # type: ignore[attr-defined]
    assert [s.rate_per_s for s in specs] == [100.0] * 3
    assert [s.phase for s in specs] == [0.0, 1 / 3, 2 / 3]


def test_merging_sums_counts_and_throughput_interval_by_interval() -> None:
    first = report(0, [[1000] * 10, [1100] * 10, [1200] * 10, [1300] * 10, [1500] * 10])
    second = report(1, [[1000] * 5] * 5)
    result = merge_reports(SPEC, [first, second])
    assert result.ok and result.warnings == ()
    assert result.ops == 75 == decode(result.histogram).get_total_count()
    assert result.ops_per_s == pytest.approx(75 / SPEC.duration_s)
    assert result.interval_ops_per_s == pytest.approx((15.0, 15.0, 15.0, 15.0, 15.0))
    assert [decode(h).get_total_count() for h in result.interval_histograms] == [15] * 5
    assert result.latency.max_ns == 1500 and result.latency.min_ns == 1000  # below 2048 ns, exact to the ns


def test_a_client_that_stopped_early_fails_the_configuration_and_keeps_its_latencies() -> None:
    stopped = report(1, [[900] * 4, [], [], [], []], window_s=1.2,
                     fatal="redis at 127.0.0.1:1 failed during get: Connection refused; check the server")
    result = merge_reports(SPEC, [report(0, [[1000] * 3] * 5), stopped])
    assert result.error == (
        "1 of 2 clients stopped early, client 1 after 1.2 of 5 s: redis at 127.0.0.1:1 failed during get: "
        "Connection refused; check the server (latencies measured until then are kept)"
    )
    assert decode(result.histogram).get_total_count() == 19


def test_a_failed_check_fails_the_configuration_with_the_first_key() -> None:
    bad = report(1, [[1000] * 2] * 5, failed_checks=3, first_failed_check="key user000000000004: the key is missing")
    result = merge_reports(SPEC, [report(0, [[1000] * 2] * 5), bad])
    assert result.error == "3 of 20 reads did not return what was written; first: key user000000000004: the key is missing"


def test_a_busy_client_and_a_crowded_host_are_reported_as_the_clients_limit() -> None:
    busy = [report(i, [[1000]] * 5, busy_cpu_s=4.8, host_cpus=2) for i in range(2)]
    result = merge_reports(SPEC, busy)
    assert result.client_saturated
    assert result.warnings == (
        "2 of 2 clients kept a core busy (up to 96%): the clients, not the server, may set the pace; add clients, "
        "or run them on more machines with --cluster.",
        "the 2 clients on here used 1.9 of its 2 CPUs: that host is saturated and the figures measure it as much "
        "as the server; spread the clients with --cluster.",
    )


def test_an_open_loop_behind_its_schedule_says_who_is_to_blame() -> None:
    spec = replace(SPEC, rate_per_s=100.0)
    late = [report(i, [[1000] * 8] * 5, scheduled=250, unsent=210, final_lag_ns=2_500_000_000) for i in range(2)]
    result = merge_reports(spec, late)
    assert result.behind_schedule and not result.client_saturated
    assert result.warnings == (
        "the open loop fell behind its schedule: 80 of 500 requests due were answered and the last was sent "
        "2500.0 ms late; the server did not keep up with 100 requests/s and the latencies include the queueing.",
    )
    on_time = [report(i, [[1000] * 50] * 5, scheduled=250, unsent=0, final_lag_ns=0) for i in range(2)]
    assert not merge_reports(spec, on_time).behind_schedule


def test_a_host_busy_with_other_work_is_reported_even_when_the_clients_are_idle() -> None:
    result = merge_reports(SPEC, [report(i, [[1000]] * 5, host_busy=0.97, host_cpus=2) for i in range(2)])
    assert result.client_saturated
    assert result.warnings == (
        "here, where 2 clients ran, was 97% busy with every process on it (the clients used 0.4 of its 2 CPUs): "
        "the clients waited for a CPU, so the figures are low; run on a quieter machine or spread the clients "
        "with --cluster.",
    )


def test_clients_that_never_started_say_so() -> None:
    never = [report(i, [[]] * 5, wall_s=0.0, window_s=0.0, fatal="cannot connect to redis at 127.0.0.1:1: refused")
             for i in range(2)]
    assert merge_reports(SPEC, never).error == "2 of 2 clients could not start: cannot connect to redis at 127.0.0.1:1: refused"


def test_an_interrupted_configuration_keeps_the_intervals_every_client_finished() -> None:
    # Issue 27, item 6: an interrupted load kept no cell. Client 0 stopped 3.4 s into SPEC's 5 one-second
    # intervals, client 1 at 2.9 s: each sent something in its unfinished interval, which is left out.
    first = report(0, [[1000] * 10, [1100] * 10, [1200] * 10, [9000] * 4, []], window_s=3.4, fatal="stopped by SIGINT")
    second = report(1, [[2000] * 5, [2000] * 5, [9000] * 4, [], []], window_s=2.9, fatal="stopped by SIGINT")
    result = interrupted_result(SPEC, [first, second], "interrupted")
    assert result is not None
    assert result.error == "interrupted after 2 of 5 s: a partial cell of the 2 intervals every client finished"
    assert [decode(h).get_total_count() for h in result.interval_histograms] == [15, 15]
    assert result.ops == 30 == decode(result.histogram).get_total_count()
    assert result.latency.max_ns == 2000  # nothing of an unfinished interval
    assert result.interval_ops_per_s == pytest.approx((15.0, 15.0))
    assert result.ops_per_s == pytest.approx(20 / 2 + 10 / 2)
    assert [r.window_s for r in result.reports] == [2.0, 2.0]


def test_an_interrupted_configuration_without_a_finished_interval_keeps_nothing() -> None:
    early = report(0, [[1000] * 3, [], [], [], []], window_s=0.7, fatal="stopped by SIGTERM")
    never = ClientReport.not_run(SPEC.client_specs()[1], "the run was called off before it started")
    assert interrupted_result(SPEC, [early, never], "terminated (SIGTERM)") is None
    assert interrupted_result(SPEC, [never, never], "terminated (SIGTERM)") is None
    # A client that never ran does not hold the others' intervals back.
    ran = report(0, [[1000] * 3, [1000] * 3, [], [], []], window_s=2.5, fatal="stopped by SIGTERM")
    partial = interrupted_result(SPEC, [ran, never], "terminated (SIGTERM)")
    assert partial is not None and len(partial.interval_histograms) == 2 and partial.ops == 6
