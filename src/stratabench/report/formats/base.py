"""The reporter interface: tables in, text out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from stratabench.report.table import Table

__all__ = ["Reporter"]


class Reporter(ABC):
    """Renders tables in one format."""

    name: ClassVar[str]

    @abstractmethod
    def render(self, tables: Sequence[Table]) -> str:
        """All tables as one text, ending with a newline."""
