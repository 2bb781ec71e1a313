"""The bulkload study (docs/studies/bulkload.md): its suite, its Go rows, its report."""

from stratabench.suites.bulkload import report, suite

__all__ = ["report", "suite"]
