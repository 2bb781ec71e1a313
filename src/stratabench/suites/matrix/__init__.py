"""The matrix study: its suite, operations and report."""

from stratabench.suites.matrix import report, suite

__all__ = ["report", "suite"]
