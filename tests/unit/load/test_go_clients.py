"""What a Go client is given: the same requests a Python client of the same seed sends, the store's settings,
its keys' prefix; and the bad input that is refused before any client starts (no server needed)."""

from __future__ import annotations

import base64
from dataclasses import replace

import pytest

from stratabench.errors import UsageError
from stratabench.load.go_clients import check_go_store, go_client_input, report_from_json
from stratabench.load.run import LoadSpec
from stratabench.options import RunOptions
from tests.unit.load.reports import SPEC, report


def test_a_go_client_is_given_the_plan_a_python_client_would_follow() -> None:
    spec = replace(SPEC, workload="a", seed=7, run_id="r1",
                   options=RunOptions(settings={"redis.key_ttl": "60", "redis.socket_timeout": "2.5"}))
    client = spec.client_specs()[1]
    given = go_client_input(client)
    plan = client.requests.operations(1)  # type: ignore[attr-defined]
    assert base64.b64decode(given["reads"]) == bytes(plan.reads)
    keys = base64.b64decode(given["keys"])
    assert [int.from_bytes(keys[i:i + 4], "little") for i in range(0, len(keys), 4)] == plan.keys
    assert given["first_key"] == 4 and [base64.b64decode(p) for p in given["payloads"]] == list(SPEC.payloads[4:])
    assert given["prefix"] == f"sb:{spec.namespace}:"
    assert given["store"]["key_ttl_s"] == 60 and given["store"]["socket_timeout_s"] == 2.5
    assert given["index"] == 1 and given["phase"] == 0.5 and given["intervals"] == SPEC.intervals


def test_a_go_report_line_is_a_client_report() -> None:
    made = report(0, [[1000]] * 5)
    again = report_from_json({**made.__dict__, "kinds": {"read": 5}, "interval_histograms": list(made.interval_histograms)})
    assert again == made


@pytest.mark.parametrize("url", ["memcached://127.0.0.1:1", "sqlite:///tmp/x.db"])
def test_go_clients_refuse_a_store_they_cannot_load(url: str) -> None:
    with pytest.raises(UsageError, match=r"Go clients load redis, rediss stores, not \w+://; use --client-lang python"):
        check_go_store(url)
    with pytest.raises(UsageError, match="Go clients load"):
        LoadSpec(url, SPEC.payloads, client_lang="go")


def test_an_unknown_client_language_is_refused() -> None:
    with pytest.raises(UsageError, match=r"--client-lang 'rust': choose python or go"):
        replace(SPEC, client_lang="rust")
