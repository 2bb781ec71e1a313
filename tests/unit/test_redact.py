"""Passwords out of URLs and out of text that quotes them."""

from __future__ import annotations

from pathlib import Path

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


@pytest.mark.parametrize(
    "text",
    [
        "redis://:hunter2@[::1",  # unbalanced IPv6 bracket: urlsplit raises
        "redis://:hunter2@[::1]:6379/0",
        "redis://u:hunter2@[fe80::1%25eth0",
        "mysql://bench:hunter2@host:notaport/db",
        "postgresql://[::1/db?password=hunter2",
        "user:hunter2@host",  # no scheme at all
        "see redis://:hunter2@[::1 and mysql://u:hunter2@h/db",
    ],
)
def test_unparseable_text_never_shows_its_password(text: str) -> None:
    shown = redact(text)
    assert "hunter2" not in shown and MASK in shown
    assert password_of(text) == "hunter2"
    assert "hunter2" not in scrub(f"driver says: {text} refused hunter2", text)


def test_cli_never_prints_the_password_of_a_malformed_url(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from stratabench.cli.main import main

    data = tmp_path / "records.jsonl"
    data.write_text('{"id": 1}\n')
    for url in ("redis://:hunter2@[::1", "redis://:hunter2@127.0.0.1:notaport/0"):
        assert main(["run", "--data", str(data), "--store", url, "-o", str(tmp_path / "r.jsonl"), "--overwrite"]) != 0
        out, err = capsys.readouterr()
        assert "hunter2" not in out + err and err.startswith("error: ")
        results = tmp_path / "r.jsonl"
        assert not results.exists() or "hunter2" not in results.read_text()
        assert main(["clean", "--store", url]) == 2
        out, err = capsys.readouterr()
        assert "hunter2" not in out + err and err.startswith("error: malformed store URL")


@pytest.mark.parametrize("url", [
    "redis://:Sec/hunter2@127.0.0.1:6379/0", "redis://:Sec#hunter2@127.0.0.1:6379/0",
    "redis://:12?hunter2@127.0.0.1:6379/0", "redis://:12/hunter2@127.0.0.1:6379/0",
    "postgresql://u:a/b?c#hunter2@127.0.0.1:1/db",
])
def test_a_raw_reserved_character_in_a_password_is_masked_and_refused(url: str) -> None:
    # Issue 27, item 3: a raw / ? # ends a URL parser's host part inside the password.
    from stratabench.errors import UsageError
    from stratabench.layers.stores.base import parse_store_url

    assert "hunter2" not in redact(url) and MASK in redact(url)
    assert password_of(url) is not None and "hunter2" in password_of(url)
    assert "hunter2" not in scrub(f"driver: {url}", url)
    with pytest.raises(UsageError) as refused:
        parse_store_url(url)
    assert "hunter2" not in str(refused.value) and "Sec" not in str(refused.value)
    assert "percent-encoded (%2F %3F %23 %40 %3A)" in str(refused.value)


def test_an_at_sign_in_a_path_is_not_a_password() -> None:
    from stratabench.layers.stores.base import parse_store_url

    assert redact("sqlite:///tmp/a@b.db") == "sqlite:///tmp/a@b.db" and password_of("sqlite:///tmp/a@b.db") is None
    assert parse_store_url("sqlite:///tmp/a@b.db").path == "/tmp/a@b.db"
    assert parse_store_url("postgresql://h/db?password=x").query == "password=x"


@pytest.mark.parametrize("url", [
    "postgresql://u:hunter2@/db?host=/nonexistent-socket-dir", "postgresql://u:hunter2@:1/db",
    "mysql://u:hunter2@:1/db", "redis://:hunter2@:1/0",
])
def test_a_url_without_a_host_never_shows_its_password(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                        url: str) -> None:
    # Issue 27, item 3: Store.address fell back to a "path" that held the user info, into messages,
    # the cell's error in the results file and every report.
    from stratabench.cli.main import main
    from stratabench.report.formats import REPORTERS

    data = tmp_path / "records.jsonl"
    data.write_text('{"id": 1}\n{"id": 2}\n')
    results = tmp_path / "r.jsonl"
    code = main(["run", "matrix", "--data", str(data), "--codec", "json", "--compressor", "none", "--store", url,
                 "--in-process", "--samples", "1", "--min-time", "0.001", "--warmups", "0", "--memory-samples", "0",
                 "--set", "matrix.stores=memory", "--set", "matrix.operations=get_one", "-q", "-o", str(results)])
    out, err = capsys.readouterr()
    assert code == 1 and "hunter2" not in out + err
    text = results.read_text()
    assert "hunter2" not in text and "(no host in the URL: the driver's default)" in text
    for name in REPORTERS.names:
        assert main(["report", str(results), "--format", name]) == 0
        assert "hunter2" not in "".join(capsys.readouterr())


@pytest.mark.parametrize("url", ["sqlite://u:hunter2@/x.db", "file://u:hunter2@/tmp", "memory://u:hunter2@"])
def test_an_embedded_store_refuses_a_password(capsys: pytest.CaptureFixture[str], url: str) -> None:
    from stratabench.cli.main import main

    assert main(["run", "matrix", "--dry-run", "--store", url]) == 2
    err = capsys.readouterr().err
    assert "hunter2" not in err and "is embedded and takes no user name or password" in err
