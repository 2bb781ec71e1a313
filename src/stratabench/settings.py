"""Plugin settings: each declared once, with its default, and checked.

A plugin (suite, store, compressor, codec, mapper) declares every setting it
reads in its class attribute ``settings``, a tuple of :class:`Setting`, and
reads them through a :class:`SettingReader`, which refuses a name the plugin
did not declare. Users give values with ``--set NAME=VALUE``; the CLI checks
each name and value against the declarations of every registered plugin
(:func:`stratabench.plugins.check_settings`) before anything runs, so a typo is an error instead
of a setting silently ignored. ``stratabench list settings`` shows them all.

Names are namespaced, ``sqlite.journal_mode``. The namespace is usually the
plugin's name but need not be (the bulkload suite declares ``go.*``), so a
name is found in an index of declared names (:func:`stratabench.plugins.declared_settings`),
never guessed from its namespace. Building the index imports plugin modules
only, never their optional third-party packages: declarations are plain
class attributes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from stratabench.errors import StratabenchError, UnknownNameError, UsageError

if TYPE_CHECKING:
    from stratabench.options import RunOptions

__all__ = [
    "DeclaredSetting",
    "Setting",
    "SettingKind",
    "SettingReader",
    "check_settings_against",
    "index_settings",
]

SettingKind = Literal["text", "whole", "number", "flag", "list"]
"""What a value must look like: any text; a whole number; a number; yes or
no; a comma-separated list."""

_FORMS: dict[str, str] = {"text": "text", "whole": "whole number", "number": "number", "flag": "yes or no",
                          "list": "comma-separated list"}
_FLAGS = {"yes": True, "true": True, "on": True, "1": True, "no": False, "false": False, "off": False, "0": False}


def _show(bound: float) -> str:
    """A range's bound as people read it: ``1,048,576``, ``0.001``."""
    return f"{int(bound):,}" if float(bound).is_integer() else f"{bound:g}"


@dataclass(frozen=True)
class Setting:
    """One plugin setting, as ``--set`` takes it and ``list settings`` shows it.

    Attributes
    ----------
    name
        Namespaced, ``sqlite.journal_mode``.
    default
        The value when the run does not set it, as it would be typed. An
        empty default means the plugin decides (``help`` says how), which is
        also what an empty value asks for.
    help
        One line: what it changes, its unit, what an empty value means.
    kind
        What a value must look like (:data:`SettingKind`).
    choices
        For ``text``: the only values allowed, lower case (values are
        compared in lower case).
    minimum, maximum
        For ``whole`` and ``number``: the range a value must be in, checked
        before anything runs (a ``number`` must also be finite). Every
        numeric setting declares both, so no value can crash a plugin later.
    """

    name: str
    default: str
    help: str
    kind: SettingKind = "text"
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None

    def __post_init__(self) -> None:
        # Declarations are code: a bad one is a bug, found at import time.
        namespace, dot, rest = self.name.partition(".")
        if not (namespace and dot and rest):
            raise ValueError(f"setting name {self.name!r} is not PLUGIN.SETTING")
        if self.kind in ("whole", "number") and (self.minimum is None or self.maximum is None):
            raise ValueError(f"setting {self.name} is a {self.kind} setting; declare its minimum and maximum")
        self.check(self.default)

    @property
    def namespace(self) -> str:
        """The part of the name before the first dot (``sqlite``)."""
        return self.name.partition(".")[0]

    @property
    def form(self) -> str:
        """What a value looks like, for people: ``whole number``, ``one of wal, off``."""
        if self.choices:
            return f"one of {', '.join(self.choices)}"
        if self.minimum is not None and self.maximum is not None:
            return f"{_FORMS[self.kind]} from {_show(self.minimum)} to {_show(self.maximum)}"
        return _FORMS[self.kind]

    def check(self, raw: str) -> None:
        """Raise :class:`UsageError` (one line) when ``raw`` is not a valid value."""
        if raw == "" and (self.default == "" or self.kind in ("text", "list")) and not self.choices:
            return
        if self.kind == "whole":
            self.whole(raw)
        elif self.kind == "number":
            self.number(raw)
        elif self.kind == "flag":
            self.flag(raw)
        elif self.kind == "text":
            self.text(raw)

    def _bad(self, raw: str, what: str) -> UsageError:
        return UsageError(f"setting {self.name}={raw!r} {what}")

    def text(self, raw: str) -> str:
        """``raw``, lower-cased and checked when the setting has choices."""
        if not self.choices:
            return raw
        value = raw.lower()
        if value not in self.choices:
            raise self._bad(raw, f"is not valid; use one of {', '.join(self.choices)}")
        return value

    def whole(self, raw: str) -> int:
        """``raw`` as a whole number in the declared range."""
        try:
            value = int(raw)
        except ValueError:
            raise self._bad(raw, f"is not a {self.form}") from None
        return int(self._in_range(raw, value))

    def number(self, raw: str) -> float:
        """``raw`` as a finite number in the declared range."""
        try:
            value = float(raw)
        except ValueError:
            raise self._bad(raw, f"is not a {self.form}") from None
        if not math.isfinite(value):
            raise self._bad(raw, f"is not a {self.form} (a finite number)")
        return self._in_range(raw, value)

    def _in_range(self, raw: str, value: float) -> float:
        if (self.minimum is not None and value < self.minimum) or (self.maximum is not None and value > self.maximum):
            raise self._bad(raw, f"is out of range: use a {self.form}")
        return value

    def flag(self, raw: str) -> bool:
        """``raw`` as yes (``yes``, ``true``, ``on``, ``1``) or no (``no``, ``false``, ``off``, ``0``)."""
        try:
            return _FLAGS[raw.strip().lower()]
        except KeyError:
            raise self._bad(raw, "is not yes or no") from None

    @staticmethod
    def items(raw: str) -> list[str]:
        """``raw`` split on commas, blanks dropped."""
        return [part.strip() for part in raw.split(",") if part.strip()]


class SettingReader:
    """The values of one plugin's settings in one run.

    Each method takes a declared name and returns the run's value, or the
    declared default, converted for its kind; a value of the wrong form is
    a one-line :class:`UsageError`.

    Parameters
    ----------
    plugin
        The class that declares the settings (its ``settings`` attribute).
    options
        The run's options; ``None`` gives every default.

    Raises
    ------
    LookupError
        From every method, for a name ``plugin`` does not declare, or one
        declared of another kind: a bug in the plugin, not a user error.
    """

    def __init__(self, plugin: type, options: RunOptions | None) -> None:
        self._plugin = plugin
        self._values: Mapping[str, str] = options.settings if options is not None else {}

    def _get(self, name: str, *kinds: SettingKind) -> tuple[Setting, str]:
        declared: tuple[Setting, ...] = getattr(self._plugin, "settings", ())
        for setting in declared:
            if setting.name == name:
                break
        else:
            plugin = self._plugin.__qualname__
            raise LookupError(f"{plugin} reads setting {name!r} but does not declare it in `settings`")
        if setting.kind not in kinds:
            raise LookupError(f"setting {name} is declared {setting.kind}, read as {' or '.join(kinds)}")
        return setting, self._values.get(name, setting.default)

    def given(self, name: str) -> bool:
        """Whether the value is not empty (for settings whose empty default means "the plugin decides")."""
        _, raw = self._get(name, "text", "whole", "number", "flag", "list")
        return raw != ""

    def text(self, name: str) -> str:
        """A ``text`` setting (lower-cased when it has choices)."""
        setting, raw = self._get(name, "text")
        return setting.text(raw)

    def whole(self, name: str) -> int:
        """A ``whole`` setting."""
        setting, raw = self._get(name, "whole")
        return setting.whole(raw)

    def number(self, name: str) -> float:
        """A ``number`` setting."""
        setting, raw = self._get(name, "number")
        return setting.number(raw)

    def flag(self, name: str) -> bool:
        """A ``flag`` setting."""
        setting, raw = self._get(name, "flag")
        return setting.flag(raw)

    def items(self, name: str) -> list[str]:
        """A ``list`` setting, split on commas; empty when not set."""
        setting, raw = self._get(name, "list")
        return setting.items(raw)


@dataclass(frozen=True)
class DeclaredSetting:
    """A setting and the plugin that declares it.

    Attributes
    ----------
    setting
        The declaration.
    kind
        The plugin's kind, as its registry names it (``suite``, ``store``).
    plugin
        The plugin's registered name (``bulkload`` declares ``go.count``).
    """

    setting: Setting
    kind: str
    plugin: str


def index_settings(plugins: Iterable[tuple[str, str, type]]) -> dict[str, DeclaredSetting]:
    """Index the settings of ``(kind, name, class)`` plugins by setting name.

    Raises
    ------
    StratabenchError
        When two plugins declare the same name (they could never be told
        apart on the command line), or ``settings`` is not a tuple of
        :class:`Setting`.
    """
    index: dict[str, DeclaredSetting] = {}
    for kind, plugin, cls in plugins:
        declared = getattr(cls, "settings", ())
        if not isinstance(declared, tuple) or not all(isinstance(s, Setting) for s in declared):
            raise StratabenchError(f"{kind} {plugin}: `settings` must be a tuple of Setting")
        for setting in declared:
            other = index.get(setting.name)
            if other is not None and (other.kind, other.plugin) != (kind, plugin):
                raise StratabenchError(
                    f"setting {setting.name} is declared by {other.kind} {other.plugin} and {kind} {plugin}; rename one"
                )
            index[setting.name] = DeclaredSetting(setting, kind, plugin)
    return index


def check_settings_against(values: Mapping[str, str], declared: Mapping[str, DeclaredSetting]) -> None:
    """Check ``--set`` values: every name declared by a plugin, every value of its kind.

    Parameters
    ----------
    values
        Setting name → value, as parsed from ``--set``.
    declared
        The declarations to check against (``stratabench.plugins.declared_settings()``).

    Raises
    ------
    UnknownNameError
        For a name no plugin declares, listing the names of its namespace,
        or the known namespaces when the namespace itself is unknown.
    UsageError
        For a value that is not of its setting's kind.
    """
    if not values:
        return
    known = declared
    for name, raw in values.items():
        entry = known.get(name)
        if entry is None:
            namespace = name.partition(".")[0]
            same = [other for other in known if other.partition(".")[0] == namespace]
            if same:
                raise UnknownNameError(f"--set {name}: unknown setting; known for {namespace}: {', '.join(same)}")
            namespaces = sorted({other.partition(".")[0] for other in known})
            raise UnknownNameError(
                f"--set {name}: unknown setting namespace {namespace!r}; known: {', '.join(namespaces)} "
                "(`stratabench list settings` shows every setting)"
            )
        entry.setting.check(raw)
