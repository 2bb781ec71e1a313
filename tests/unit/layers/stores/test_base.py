"""Store URLs, namespaces a store accepts, and the scheme registry, without servers."""

from __future__ import annotations

import pytest

from stratabench.errors import UnknownNameError, UsageError
from stratabench.layers.stores import open_store, store_for_scheme
from stratabench.layers.stores.base import parse_store_url


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


@pytest.mark.parametrize("namespace", ["", "a:b", "a b", "a/b", "x" * 101])
def test_bad_namespaces(namespace: str) -> None:
    with pytest.raises(UsageError):
        open_store("memory://", namespace=namespace)


def test_embedded_urls_need_a_path() -> None:
    for url in ("sqlite://", "file://", "lmdb://"):
        with pytest.raises(UsageError):
            open_store(url, namespace="n")
