"""Keys on shared key/value servers expire by themselves: a killed run leaves nothing for long."""

from __future__ import annotations

import re

import socket
import time
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

import pytest

from stratabench.errors import UsageError
from stratabench.layers.stores import open_store
from stratabench.options import RunOptions
from stratabench.services.memcached import auth_command

pytestmark = pytest.mark.server
DAY = 86400


@pytest.mark.parametrize(("ttl", "expected"), [(None, (DAY - 60, DAY)), ("120", (60, 120)), ("0", (-1, -1))])
def test_redis_keys_carry_the_ttl(server_url: Callable[[str], str], ttl: str | None, expected: tuple[int, int]) -> None:
    import redis

    options = RunOptions(settings={} if ttl is None else {"redis.key_ttl": ttl})
    url = server_url("redis")
    client = redis.Redis.from_url(url)
    with open_store(url, namespace="ttl-test", options=options) as store:
        try:
            store.put(b"one", b"1")
            store.put_many([(b"two", b"2"), (b"three", b"3")])
            low, high = expected
            for key in (b"one", b"two", b"three"):
                assert low <= client.ttl(store.prefix + key) <= high
            assert store.get_many([b"one", b"two", b"three"]) == [b"1", b"2", b"3"]
        finally:
            store.cleanup()
            client.close()


def _expiries(url: str, prefix: bytes) -> dict[bytes, int]:
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 11211), timeout=5) as sock:
        if parts.password:  # the private server takes a password: authenticate first
            sock.sendall(auth_command(unquote(parts.username or ""), unquote(parts.password)))
            assert sock.recv(64) == b"STORED\r\n"
        sock.sendall(b"lru_crawler metadump all\r\n")
        data = b""
        while not data.endswith(b"END\r\n"):
            chunk = sock.recv(1 << 16)
            assert chunk, "metadump ended early"
            data += chunk
    found = {}
    for line in data.splitlines():
        fields = dict(field.split(b"=", 1) for field in line.split() if b"=" in field)
        key = unquote(fields.get(b"key", b"").decode()).encode()
        if key.startswith(prefix):
            found[key] = int(fields[b"exp"])
    return found


def test_memcached_items_expire_in_a_day(server_url: Callable[[str], str]) -> None:
    url = server_url("memcached")
    with open_store(url, namespace="ttl-test") as store:
        try:
            store.put(b"one", b"1")
            store.put_many([(b"two", b"2")])
            # A metadump is a live walk that can miss an item moving between LRU segments: ask again.
            for _ in range(20):
                expiries = _expiries(url, store.prefix)
                if len(expiries) == 2:
                    break
                time.sleep(0.05)
            assert len(expiries) == 2
            now = time.time()
            assert all(now + DAY - 120 <= exp <= now + DAY + 5 for exp in expiries.values()), expiries
        finally:
            store.cleanup()


@pytest.mark.parametrize(("setting", "value"), [("redis.key_ttl", "-1"), ("memcached.key_ttl", "-1"),
                                                ("memcached.key_ttl", "2592001")])
def test_bad_ttl_is_one_line(server_url: Callable[[str], str], setting: str, value: str) -> None:
    store = setting.partition(".")[0]
    with pytest.raises(UsageError, match=re.escape(f"{setting}='{value}' is out of range")):
        open_store(server_url(store), namespace="ttl-test", options=RunOptions(settings={setting: value}))
