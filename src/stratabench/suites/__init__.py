"""The suites: one module per study, registered with ``@SUITES.register``."""

from __future__ import annotations

from stratabench.registry import Registry

__all__ = ["SUITES"]

SUITES: Registry[type] = Registry("suite", __name__)
