"""The cache study: its suite, operations and report."""

from stratabench.suites.cache import report, suite

__all__ = ["report", "suite"]
