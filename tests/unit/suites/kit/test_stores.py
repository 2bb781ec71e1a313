"""One answer to "which store is this URL?": the run's stores with their label, kind and shown URL."""

from __future__ import annotations

import pytest

from stratabench.errors import UnknownNameError, UsageError
from stratabench.options import RunOptions
from stratabench.suites.kit.stores import RunStore, real_url, run_stores

URLS = ("redis://127.0.0.1:6379/0", "mysql://u:secret@127.0.0.1:3306/db", "rediss://:pw@127.0.0.1:6380/1",
        "mariadb://127.0.0.1:3307/x", "sqlite:///tmp/b.db", "postgres://127.0.0.1/db")  # fmt: skip


def test_each_url_is_the_plugin_its_scheme_names_labelled_per_kind() -> None:
    stores = run_stores(RunOptions(stores=URLS), embedded=("memory", "sqlite"))
    assert [(s.label, s.kind, s.plugin, s.service) for s in stores] == [
        ("memory", "memory", "memory", None), ("sqlite", "sqlite", "sqlite", None),
        ("redis", "redis", "redis", "redis"), ("mysql", "mysql", "mysql", "mariadb"),
        ("redis#2", "redis", "redis", "redis"), ("mysql#2", "mysql", "mysql", "mariadb"),
        ("sqlite#2", "sqlite", "sqlite", None), ("postgresql", "postgresql", "postgresql", "postgresql"),
    ]  # fmt: skip
    assert [s.url for s in stores[:2]] == ["", ""]
    assert stores[3].url == "mysql://u:***@127.0.0.1:3306/db" and "pw" not in stores[4].url


def test_a_suite_may_name_stores_by_the_server_they_talk_to() -> None:
    stores = run_stores(RunOptions(stores=URLS), embedded=("memory",), kind="server")
    assert [s.label for s in stores] == ["memory", "redis", "mariadb", "redis#2", "mariadb#2", "sqlite",
                                         "postgresql"]  # fmt: skip
    assert stores[2] == RunStore("mariadb", "mariadb", "mysql://u:***@127.0.0.1:3306/db", "mysql", "mariadb")


def test_a_url_no_store_opens_is_refused_naming_the_known_schemes() -> None:
    with pytest.raises(UnknownNameError, match=r"no store opens ftp:// URLs; known: .*redis://"):
        run_stores(RunOptions(stores=("ftp://127.0.0.1/x",)))


def test_a_cell_finds_its_full_url_again_and_not_another_runs() -> None:
    options = RunOptions(stores=URLS)
    for store in run_stores(options):
        assert real_url(options, store.url) in URLS
    with pytest.raises(UsageError, match="not among this run's --store URLs"):
        real_url(options, "redis://127.0.0.1:9999/0")
