"""Every public module declares __all__, and every name in it exists."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import stratabench

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(stratabench.__path__, "stratabench.")
    if not any(part.startswith("_") for part in info.name.split(".")) and not info.name.endswith(".worker")
)


@pytest.mark.parametrize("name", MODULES)
def test_public_module_declares_all(name: str) -> None:
    module = importlib.import_module(name)
    if module.__file__ and module.__file__.endswith("__init__.py") and not hasattr(module, "__all__"):
        return  # a package docstring alone exports nothing
    assert hasattr(module, "__all__"), f"{name} has no __all__"
    for exported in module.__all__:
        assert hasattr(module, exported), f"{name}.__all__ names {exported!r}, which does not exist"
