"""The report of ``stratabench load`` runs (no suite: the load engine writes their cells)."""

from stratabench.suites.load import report

__all__ = ["report"]
