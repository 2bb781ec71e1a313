"""Every plugin registry, listed once, and what is derived from the list.

``stratabench list`` shows these kinds in this order, and ``--set`` names
are checked against the settings their plugins declare. The module sits on
the top floor (beside the CLI) because it names every registry, the suites'
included; lower floors never import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stratabench.registry import Registry
from stratabench.settings import DeclaredSetting, check_settings_against, index_settings

__all__ = ["check_settings", "declared_settings", "registries"]


def registries() -> list[tuple[str, Registry[Any]]]:
    """The plugin kinds, in the order they are listed: (plural label, registry)."""
    from stratabench.datasets import DATASETS
    from stratabench.layers.codecs import CODECS
    from stratabench.layers.compressors import COMPRESSORS
    from stratabench.layers.mappers import MAPPERS
    from stratabench.layers.stores import STORES
    from stratabench.report.formats import REPORTERS
    from stratabench.suites import SUITES
    from stratabench.systems.treestore.backends import TREE_BACKENDS

    kinds: list[tuple[str, Registry[Any]]] = [
        ("suites", SUITES), ("codecs", CODECS), ("compressors", COMPRESSORS), ("stores", STORES),
        ("mappers", MAPPERS), ("report formats", REPORTERS), ("datasets", DATASETS),
        ("tree backends", TREE_BACKENDS),
    ]
    try:
        from stratabench.services import SERVICES
    except ImportError:
        pass
    else:
        kinds.append(("services", SERVICES))
    return kinds


# The kinds whose plugins may declare --set settings, in the order `list settings` shows them.
_SETTING_KINDS = ("suites", "stores", "compressors", "codecs", "mappers")


def declared_settings() -> dict[str, DeclaredSetting]:
    """Every setting of every registered suite, store, compressor, codec and mapper.

    In the order of their plugins (kinds in that order, names sorted), each
    plugin's in its declared order.
    """
    by_label = dict(registries())
    return index_settings(
        (by_label[label].kind, info.name, info.cls) for label in _SETTING_KINDS for info in by_label[label]
    )


def check_settings(values: Mapping[str, str], declared: Mapping[str, DeclaredSetting] | None = None) -> None:
    """Check ``--set`` values against ``declared`` (default: :func:`declared_settings`).

    See :func:`stratabench.settings.check_settings_against` for the errors.
    """
    if values:
        check_settings_against(values, declared_settings() if declared is None else declared)
