"""Options cross into every worker as JSON: read back the same, without resolving their types again."""

from __future__ import annotations

from typing import Any

import pytest

import stratabench.options as options_module
from stratabench.errors import UsageError
from stratabench.options import EngineOptions, RunOptions


def test_a_worker_reads_the_options_back_without_resolving_their_types_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # Resolved when the module was imported (in a run: by the zygote, before it forks any worker).
    calls: list[Any] = []
    monkeypatch.setattr(options_module, "get_type_hints", lambda cls: calls.append(cls) or {})
    sent = RunOptions(size=7, engine=EngineOptions(samples=3))
    assert RunOptions.from_json(sent.to_json()) == sent
    assert calls == []


def test_a_field_of_the_wrong_type_is_still_named() -> None:
    with pytest.raises(ValueError, match="'size'"):
        RunOptions.from_json({"size": "seven"})


def test_an_allowance_of_no_rounds_is_refused_naming_its_flag() -> None:
    with pytest.raises(UsageError, match="^--allowance-rounds must be at least 1, not 0$"):
        EngineOptions(allowance_rounds=0)
