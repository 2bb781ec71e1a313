"""The suites: one module per study, registered with ``@SUITES.register``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stratabench.registry import Registry

if TYPE_CHECKING:
    from stratabench.suites.kit.suite import Suite

__all__ = ["SUITES"]

SUITES: Registry[type[Suite]] = Registry("suite", __name__)
