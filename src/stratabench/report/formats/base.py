"""The reporter interface: a report (or bare tables) in, text out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from stratabench.report.table import Table

if TYPE_CHECKING:
    from stratabench.report.document import Report

__all__ = ["Reporter"]


class Reporter(ABC):
    """Renders tables in one format."""

    name: ClassVar[str]

    @abstractmethod
    def render(self, tables: Sequence[Table]) -> str:
        """All tables as one text, ending with a newline."""

    def render_report(self, report: Report) -> str:
        """A whole report; by default its tables in reading order (a format may read more of it)."""
        return self.render(report.tables())
