from __future__ import annotations

import pytest

from stratabench.errors import UnavailableError, UsageError
from stratabench.load.cluster import ClusterAddress, DaskClients, parse_cluster
from stratabench.services.ports import free_port


@pytest.mark.parametrize(
    ("text", "expected"),
    [("local", ClusterAddress(None)), ("local:3", ClusterAddress(None, 3)),
     ("tcp://10.0.0.5:8786", ClusterAddress("tcp://10.0.0.5:8786")), ("tls://sched:8786", ClusterAddress("tls://sched:8786"))],
)
def test_cluster_addresses(text: str, expected: ClusterAddress) -> None:
    assert parse_cluster(text) == expected
    assert str(parse_cluster(text)) == text


@pytest.mark.parametrize("text", ["local:0", "localhost", "http://host:8786", "tcp://", "8786"])
def test_a_bad_cluster_address_is_one_line(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_cluster(text)
    assert "\n" not in str(caught.value) and "--cluster" in str(caught.value)


def test_a_scheduler_that_does_not_answer_is_one_line_before_anything_starts() -> None:
    address = f"tcp://127.0.0.1:{free_port()}"
    with pytest.raises(UnavailableError, match=rf"^the Dask scheduler at {address} does not answer .*--cluster address$"):
        DaskClients(parse_cluster(address), clients=1, connect_timeout_s=1.0)
