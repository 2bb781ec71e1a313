"""The treestore study: one JSON file against per-node databases fed by diffs.

Reproduces sysrepo's datastore-plugin performance study on the datastore of
:mod:`stratabench.systems.treestore`. The package holds the 22 tests with
their state semantics (:mod:`.catalog`, :mod:`.harness`), their dataset, the
suite (one worker per backend × N), the published figures and claims, and
the report.
"""

from stratabench.suites.treestore import answer, report, suite

__all__ = ["answer", "report", "suite"]
