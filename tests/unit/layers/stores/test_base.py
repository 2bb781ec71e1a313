"""Store URLs, namespaces and the scheme registry, without servers."""

from __future__ import annotations

import pytest

from stratabench.errors import UnknownNameError, UsageError
from stratabench.layers.stores.base import namespace_identifier, open_store, parse_store_url, store_for_scheme


def test_schemes_map_to_stores() -> None:
    assert store_for_scheme("mariadb") == "mysql"
    assert store_for_scheme("MYSQL") == "mysql"
    assert store_for_scheme("postgres") == "postgresql"
    assert store_for_scheme("memory") == "memory"
    with pytest.raises(UnknownNameError, match="memcached://"):
        store_for_scheme("etcd")


@pytest.mark.parametrize("url", ["", "redis", "127.0.0.1:6379", "redis://h:notaport/0", "redis:/h"])
def test_malformed_urls(url: str) -> None:
    with pytest.raises(UsageError):
        parse_store_url(url)


def test_malformed_url_message_hides_password() -> None:
    with pytest.raises(UsageError) as caught:
        parse_store_url("redis://:secretpw@h:bad/0")
    assert "secretpw" not in str(caught.value)


def test_namespace_identifier() -> None:
    assert namespace_identifier("run_1") == "stratabench_run_1"
    changed = namespace_identifier("20261121-0545.ab")
    assert changed.startswith("stratabench_20261121_0545_ab_") and changed.isidentifier()
    assert namespace_identifier("A-b") != namespace_identifier("a_b")
    long = namespace_identifier("x" * 100)
    assert len(long) == 63 and long != namespace_identifier("x" * 99)


@pytest.mark.parametrize("namespace", ["", "a:b", "a b", "a/b", "x" * 101])
def test_bad_namespaces(namespace: str) -> None:
    with pytest.raises(UsageError):
        open_store("memory://", namespace=namespace)


def test_embedded_urls_need_a_path() -> None:
    for url in ("sqlite://", "file://", "lmdb://"):
        with pytest.raises(UsageError):
            open_store(url, namespace="n")
