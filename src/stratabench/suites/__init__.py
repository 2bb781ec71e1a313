"""The suites: one module per study, registered with ``@SUITES.register``.

The registry and the base class live in :mod:`stratabench.suites.kit.suite`;
this package re-exports the registry under its usual name.
"""

from __future__ import annotations

from stratabench.suites.kit.suite import SUITES

__all__ = ["SUITES"]
