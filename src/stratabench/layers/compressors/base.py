"""The compressor contract: bytes in, fewer bytes out, and back.

A compressor composes with any codec: the engine encodes, then compresses;
reads decompress, then decode. Each compressor records its level in
:attr:`Compressor.notes`, so results say ``zlib level 6`` and not just
``zlib``. The level comes from the constructor or from the run's setting
``{name}.level`` (``zlib.level=9``) through :meth:`Compressor.from_options`;
a compressor with levels declares that setting with :func:`level_setting`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from stratabench.errors import UsageError
from stratabench.options import RunOptions
from stratabench.settings import Setting, SettingReader

__all__ = ["Compressor", "level_setting"]


def level_setting(compressor: str, default_level: int, levels: range) -> Setting:
    """The declaration of ``{compressor}.level``, for a compressor's :attr:`Compressor.settings`."""
    return Setting(f"{compressor}.level", str(default_level),
                   f"compression level, {levels.start} to {levels.stop - 1}", "whole",
                   minimum=levels.start, maximum=levels.stop - 1)


class Compressor(ABC):
    """Compresses and decompresses whole values.

    Parameters
    ----------
    level
        The compression level; ``None`` uses :attr:`default_level`.
    """

    name: ClassVar[str]
    """The registered name (set by the registry)."""

    default_level: ClassVar[int | None] = None
    """The level used when none is given; ``None`` for compressors without levels."""

    levels: ClassVar[range | None] = None
    """The levels this compressor accepts."""

    settings: ClassVar[tuple[Setting, ...]] = ()
    """Every ``--set`` setting: ``{name}.level`` (:func:`level_setting`) when there are levels."""

    def __init__(self, *, level: int | None = None) -> None:
        if level is not None and (self.levels is None or level not in self.levels):
            allowed = f"{self.levels.start} to {self.levels.stop - 1}" if self.levels else "none"
            raise UsageError(f"{self.name} level {level} is not valid; levels: {allowed}")
        self._level = self.default_level if level is None else level

    @classmethod
    def from_options(cls, options: RunOptions | None) -> Compressor:
        """A compressor at the level of the run's ``{name}.level`` setting, if it has levels."""
        if cls.levels is None:
            return cls()
        return cls(level=SettingReader(cls, options).whole(f"{cls.name}.level"))

    @property
    def level(self) -> int | None:
        """The compression level in use (``None`` when there are none)."""
        return self._level

    @property
    def notes(self) -> dict[str, Any]:
        """What to keep with a result: the compressor and its level."""
        return {"compressor": self.name, "level": self._level}

    @abstractmethod
    def compress(self, data: bytes) -> bytes:
        """``data`` compressed; :meth:`decompress` gives it back exactly."""

    @abstractmethod
    def decompress(self, data: bytes) -> bytes:
        """The bytes :meth:`compress` was given."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} level={self._level}>"
