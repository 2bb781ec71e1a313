"""The stores of a run as its suites name them: one answer to "which store is this URL?".

A run's ``--store`` URLs are sorted out here once, for every suite: the
URL's scheme picks the store plugin through the one table the plugins
declare (:func:`stratabench.layers.stores.store_for_scheme`, the way
fsspec's ``get_filesystem_class`` maps a protocol to its file system), and
:func:`run_stores` gives each store a label, a kind and the URL a cell may
show. Cell parameters are written to the results file, so a cell names its
store by the URL with the password masked; inside the worker,
:func:`real_url` finds the full URL again among the run's ``--store`` URLs.
How a cell names its keys and tables inside a store is
:mod:`stratabench.layers.stores.namespaces`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from stratabench.errors import UsageError
from stratabench.options import RunOptions
from stratabench.redact import redact

__all__ = ["RunStore", "real_url", "run_stores"]


@dataclass(frozen=True)
class RunStore:
    """One store of a run, as cells and tables name it.

    Attributes
    ----------
    label
        The kind, with ``#2``, ``#3`` ... for a second or third store of the
        same kind (an embedded default counts as the first).
    kind
        What the suite calls the store: the store plugin's name
        (``kind="store"``: ``memory``, ``sqlite``, ``mysql``, ...) or the
        server it talks to as ``stratabench services`` names it
        (``kind="server"``: ``mariadb``, ``postgresql``, ``redis``, ...; an
        embedded store has no server and keeps its plugin's name).
    url
        The URL with its password masked; ``""`` for an embedded default the
        cell opens in its own directory.
    plugin
        The registered store plugin that opens it.
    service
        The server kind the plugin talks to (``redis``, ``mariadb``, ...), or
        ``None`` for an embedded store.
    """

    label: str
    kind: str
    url: str
    plugin: str
    service: str | None


def run_stores(options: RunOptions, *, embedded: Sequence[str] = (),
               kind: Literal["store", "server"] = "store") -> list[RunStore]:  # fmt: skip
    """The embedded stores named in ``embedded`` (in that order), then one per ``--store`` URL of the run.

    Raises
    ------
    UnknownNameError
        For a URL whose scheme no store plugin opens (listing the schemes
        that are known).
    """
    from stratabench.layers.stores import STORES
    from stratabench.layers.stores import store_for_scheme
    from stratabench.layers.stores.base import parse_store_url

    found: list[RunStore] = []

    def add(plugin: str, url: str) -> None:
        service: str | None = STORES.info(plugin).cls.service
        name = service if kind == "server" and service else plugin
        count = sum(1 for store in found if store.kind == name)
        found.append(RunStore(name if count == 0 else f"{name}#{count + 1}", name, url, plugin, service))

    for plugin in embedded:
        add(plugin, "")
    for url in options.stores:
        add(store_for_scheme(parse_store_url(url).scheme), redact(url))
    return found


def real_url(options: RunOptions, shown: str) -> str:
    """The run's ``--store`` URL whose redacted form is ``shown``.

    Raises
    ------
    UsageError
        When no store URL of the run matches (a cell built by another run).
    """
    for url in options.stores:
        if redact(url) == shown:
            return url
    raise UsageError(f"store {shown} is not among this run's --store URLs")
