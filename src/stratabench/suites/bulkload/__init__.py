"""The bulkload study (specs/bulkload.md): its suite, its Go rows, its report."""

from stratabench.suites.bulkload import report, suite

__all__ = ["report", "suite"]
