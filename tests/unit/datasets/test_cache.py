"""The dataset cache is bypassed, never trusted, when an entry cannot be read back."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from stratabench.datasets.cache import cache_dir, cached


def test_an_entry_of_classes_that_moved_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATABENCH_CACHE_DIR", str(tmp_path))
    # A pickle naming a module that no longer exists, as an older layout leaves behind.
    stale = b"cstratabench.moved_away\nRecords\n."  # protocol 0: the global stratabench.moved_away.Records
    cache_dir().mkdir(parents=True)
    (cache_dir() / "k.pickle").write_bytes(stale)
    with pytest.raises(ModuleNotFoundError):
        pickle.loads(stale)
    assert cached("k", lambda: "built") == "built"
    assert cached("k", lambda: "not again") == "built"


def test_datasets_are_kept_in_the_one_cache_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stratabench.build_cache import CACHE_DIR_ENV, cache_root

    # The variable names the cache directory for builds and datasets alike, as it does when unset.
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "mine"))
    assert cache_dir() == cache_root() / "datasets" == tmp_path / "mine" / "datasets"
    assert cached("k", lambda: "built") == "built"
    assert (tmp_path / "mine" / "datasets" / "k.pickle").is_file()
    monkeypatch.delenv(CACHE_DIR_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "stratabench" / "datasets"
