"""The store plugins: one module per store, registered with ``@STORES.register``; opening a URL.

One table answers "which store is this URL?": each plugin declares its
schemes (:attr:`~stratabench.layers.stores.base.Store.schemes`) and
:func:`store_for_scheme` reads them, as fsspec's ``registry.py`` keeps the one
table from a protocol to its filesystem. The contract (:mod:`.base`) never
looks a store up; that is done here, beside the registry, so the two do not
import each other.
"""

from __future__ import annotations

from urllib.parse import SplitResult

from stratabench.errors import UnknownNameError, UsageError
from stratabench.layers.stores.base import Store, parse_store_url, url_path
from stratabench.options import RunOptions
from stratabench.redact import redact
from stratabench.registry import Registry

__all__ = ["STORES", "check_store_url", "open_store", "store_for_scheme"]

STORES: Registry[type[Store]] = Registry("store", __name__)


_SchemeMap = dict[str, str]


def _scheme_map() -> _SchemeMap:
    schemes: _SchemeMap = {}
    for info in STORES:
        for scheme in getattr(info.cls, "schemes", ()):
            schemes[scheme] = info.name
    return schemes


def store_for_scheme(scheme: str) -> str:
    """The registered store name that opens URLs of ``scheme``.

    Raises
    ------
    UnknownNameError
        Listing the schemes that are known.
    """
    schemes = _scheme_map()
    try:
        return schemes[scheme.lower()]
    except KeyError:
        known = ", ".join(f"{s}://" for s in sorted(schemes))
        raise UnknownNameError(f"no store opens {scheme}:// URLs; known: {known}") from None


def _checked(cls: type[Store], url: str, parts: SplitResult) -> None:
    if cls.service is None and "@" in parts.netloc:
        raise UsageError(f"store URL {redact(url)!r}: {cls.name} is embedded and takes no user name or password; "
                         f"drop the part before @, as {parts.scheme}://{url_path(parts)}")
    try:
        cls.check_url(parts)
    except UsageError as error:
        raise error.with_context(f"store URL {redact(url)!r}") from None


def check_store_url(url: str) -> None:
    """Refuse a store URL that is malformed, of an unknown scheme, or one its store would misread.

    Never connects: run before anything starts, so a typo in ``--store``
    stops the run at once.
    """
    parts = parse_store_url(url)
    _checked(STORES.get(store_for_scheme(parts.scheme)), url, parts)


def open_store(
    url: str,
    *,
    namespace: str,
    options: RunOptions | None = None,
    server_pids: tuple[int, ...] | None = None,
    sweeping: bool = False,
) -> Store:
    """Open the store that ``url`` names, inside ``namespace``.

    Parameters
    ----------
    url
        ``memory://``, ``file:///dir``, ``sqlite:///path``, ``lmdb:///path``,
        ``redis://``, ``memcached://``, ``postgresql://``, ``mysql://`` (or
        ``mariadb://``), ``mongodb://``.
    namespace
        The run's namespace; see :class:`~stratabench.layers.stores.base.Store`.
    options
        Run options, for the store's namespaced settings.
    server_pids
        Process ids of the server. ``None`` looks them up among the servers
        ``stratabench services`` started, so the engine can measure their CPU.
    sweeping
        Open it only to sweep run namespaces (see :class:`~stratabench.layers.stores.base.Sweepable`).

    Raises
    ------
    UsageError
        A malformed URL or namespace.
    UnknownNameError
        No store opens the URL's scheme.
    UnavailableError
        The store's driver package is missing.
    StoreError
        The store cannot be reached.
    """
    parts = parse_store_url(url)
    cls = STORES.get(store_for_scheme(parts.scheme))
    _checked(cls, url, parts)
    if server_pids is None:
        from stratabench.services.state import pids_for_address

        server_pids = pids_for_address(parts.hostname, parts.port) if parts.hostname else ()
    store: Store = cls(url, namespace=namespace, options=options, server_pids=server_pids, sweeping=sweeping)
    return store
