"""Plugin registries: one per plugin kind, filled by a decorator.

A plugin is a class in a module of its kind's package, decorated with the
registry's :meth:`Registry.register`. The registry finds plugins by listing
the package's modules and importing them, so there is no central import list;
a plugin module must therefore import its optional third-party packages
inside its methods, never at module top, so that listing stays cheap and
works when they are missing.

Duplicate names fail at import time, so two plugins can never silently
shadow each other.

Each registry is typed by its plugins' base class (``Registry[type[Codec]]``),
so a lookup is checked: ``CODECS.get(name)`` is a ``type[Codec]``, and a
class that is not a codec cannot be registered as one.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from stratabench.errors import StratabenchError, UnavailableError, UnknownNameError

__all__ = ["Availability", "PluginInfo", "Registry", "missing_modules"]

T = TypeVar("T", bound=type)


@dataclass(frozen=True)
class Availability:
    """Whether a plugin can run here, and if not, why (one line)."""

    ok: bool
    reason: str = ""


@dataclass(frozen=True)
class PluginInfo(Generic[T]):
    """What a registry knows about one plugin.

    Attributes
    ----------
    name
        The registered name, as typed on the command line.
    cls
        The plugin class.
    summary
        The first line of the class docstring.
    requires
        Importable module names the plugin needs at run time.
    extra
        The ``stratabench[extra]`` that installs them, if any.
    """

    name: str
    cls: T
    summary: str
    requires: tuple[str, ...]
    extra: str | None

    @property
    def availability(self) -> Availability:
        """Checked without importing the required packages."""
        missing = missing_modules(self.requires)
        if not missing:
            return Availability(True)
        install = f"pip install 'stratabench[{self.extra}]'" if self.extra else f"pip install {' '.join(missing)}"
        return Availability(False, f"needs {', '.join(missing)}: {install}")

    def require(self) -> None:
        """Raise :class:`UnavailableError` if a required package is missing."""
        availability = self.availability
        if not availability.ok:
            raise UnavailableError(f"{self.name}: {availability.reason}")


def missing_modules(modules: tuple[str, ...]) -> list[str]:
    """Return the modules of ``modules`` that cannot be imported here.

    Uses :func:`importlib.util.find_spec`, which locates a module without
    running it, so a listing never pays for importing heavy packages.
    """
    missing = []
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(module)
    return missing


class Registry(Generic[T]):
    """Named plugins of one kind, discovered from one package.

    Parameters
    ----------
    kind
        What the plugins are, for messages: ``"codec"``, ``"store"``.
    package
        The dotted package whose modules hold the plugins.
    """

    def __init__(self, kind: str, package: str) -> None:
        self.kind = kind
        self.package = package
        self._plugins: dict[str, PluginInfo[T]] = {}
        self._discovered = False

    def register(
        self, name: str, *, requires: tuple[str, ...] = (), extra: str | None = None
    ) -> Callable[[T], T]:
        """Class decorator that registers a plugin under ``name``.

        Parameters
        ----------
        name
            The plugin's public name; unique within the registry.
        requires
            Modules the plugin imports at run time (checked by ``list``).
        extra
            The package extra that installs ``requires``.
        """

        def decorate(cls: T) -> T:
            if name in self._plugins and self._plugins[name].cls is not cls:
                raise StratabenchError(
                    f"two {self.kind} plugins are named {name!r}: "
                    f"{self._plugins[name].cls.__module__} and {cls.__module__}; rename one"
                )
            summary = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
            self._plugins[name] = PluginInfo(name, cls, summary, tuple(requires), extra)
            cls.name = name  # type: ignore[attr-defined]
            return cls

        return decorate

    def _discover(self) -> None:
        if self._discovered:
            return
        self._discovered = True
        package = importlib.import_module(self.package)
        for module in pkgutil.iter_modules(package.__path__):
            if not module.name.startswith("_"):
                importlib.import_module(f"{self.package}.{module.name}")

    def __iter__(self) -> Iterator[PluginInfo[T]]:
        self._discover()
        return iter(sorted(self._plugins.values(), key=lambda info: info.name))

    def __contains__(self, name: object) -> bool:
        self._discover()
        return name in self._plugins

    @property
    def names(self) -> list[str]:
        """Every registered name, sorted."""
        self._discover()
        return sorted(self._plugins)

    def info(self, name: str) -> PluginInfo[T]:
        """Return the plugin registered as ``name``.

        Raises
        ------
        UnknownNameError
            With the list of known names, when ``name`` is not registered.
        """
        self._discover()
        try:
            return self._plugins[name]
        except KeyError:
            known = ", ".join(self.names) or "none"
            raise UnknownNameError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def get(self, name: str) -> T:
        """Return the class registered as ``name``, checking it can run here."""
        info = self.info(name)
        info.require()
        return info.cls
