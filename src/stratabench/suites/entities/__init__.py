"""The entities study: its suite, its operations and its report."""

from stratabench.suites.entities import report, suite

__all__ = ["report", "suite"]
