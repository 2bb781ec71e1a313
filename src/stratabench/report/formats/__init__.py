"""Report formats: one module per format, registered with ``@REPORTERS.register``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stratabench.registry import Registry

if TYPE_CHECKING:
    from stratabench.report.formats.base import Reporter

__all__ = ["REPORTERS"]

REPORTERS: Registry[type[Reporter]] = Registry("report format", __name__)
