"""Passwords out of URLs and out of text that quotes them."""

from __future__ import annotations

import pytest

from stratabench.redact import MASK, password_of, redact, scrub


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("mysql://bench:hunter2@127.0.0.1:3307/db", "mysql://bench:***@127.0.0.1:3307/db"),
        ("redis://:hunter2@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"),
        ("postgresql://u:p%40ss@h/db?sslmode=require", "postgresql://u:***@h/db?sslmode=require"),
        ("postgresql://u:p@ss@h/db", "postgresql://u:***@h/db"),
        ("postgresql://h/db?user=u&password=hunter2", "postgresql://h/db?user=u&password=***"),
        ("redis://user@127.0.0.1:6379/0", "redis://user@127.0.0.1:6379/0"),
        ("memory://", "memory://"),
        ("sqlite:///tmp/x.db", "sqlite:///tmp/x.db"),
        ("not a url", "not a url"),
    ],
)
def test_redact(url: str, shown: str) -> None:
    assert redact(url) == shown


def test_password_of() -> None:
    assert password_of("mysql://u:p%40ss@h/db") == "p@ss"
    assert password_of("postgresql://h/db?password=x%21") == "x!"
    assert password_of("redis://h:1/0") is None


def test_scrub_removes_raw_and_encoded_password() -> None:
    url = "mysql://u:p%40ss@h:1/db"
    text = f"failed on {url}: password p@ss or p%40ss refused"
    cleaned = scrub(text, url)
    assert "p@ss" not in cleaned and "p%40ss" not in cleaned
    assert cleaned.count(MASK) >= 3
    assert scrub("nothing secret", "redis://h/0") == "nothing secret"
