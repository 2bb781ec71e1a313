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
    (cache_dir() / "k.pickle").write_bytes(stale)
    with pytest.raises(ModuleNotFoundError):
        pickle.loads(stale)
    assert cached("k", lambda: "built") == "built"
    assert cached("k", lambda: "not again") == "built"
