"""Report formats: one module per format, registered with ``@REPORTERS.register``."""

from __future__ import annotations

from stratabench.registry import Registry

__all__ = ["REPORTERS"]

REPORTERS: Registry[type] = Registry("report format", __name__)
