from __future__ import annotations

import pytest

from stratabench.errors import StratabenchError, UnavailableError, UnknownNameError
from stratabench.registry import Registry, missing_modules


def make_registry() -> Registry[type]:
    registry: Registry[type] = Registry("widget", "stratabench.report.formats")
    registry._discovered = True  # nothing to discover: plugins are registered below
    return registry


def test_register_and_get() -> None:
    registry = make_registry()

    @registry.register("blue")
    class Blue:
        """A blue widget."""

    assert registry.get("blue") is Blue and registry.info("blue").summary == "A blue widget."
    assert registry.names == ["blue"] and "blue" in registry


def test_duplicate_names_fail_at_registration() -> None:
    registry = make_registry()
    registry.register("same")(type("One", (), {}))
    with pytest.raises(StratabenchError, match="two widget plugins are named 'same'"):
        registry.register("same")(type("Two", (), {}))


def test_unknown_name_lists_the_known_ones() -> None:
    registry = make_registry()
    registry.register("a")(type("A", (), {}))
    with pytest.raises(UnknownNameError, match="unknown widget 'b'; known: a"):
        registry.get("b")


def test_missing_package_is_explained_without_importing() -> None:
    registry = make_registry()
    registry.register("needy", requires=("json", "no_such_module_xyz"), extra="codecs")(type("N", (), {}))
    availability = registry.info("needy").availability
    assert not availability.ok
    assert availability.reason == "needs no_such_module_xyz: pip install 'stratabench[codecs]'"
    with pytest.raises(UnavailableError, match="needy: needs no_such_module_xyz"):
        registry.get("needy")
    assert missing_modules(("json",)) == []
