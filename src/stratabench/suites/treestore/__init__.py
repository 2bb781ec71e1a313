"""The treestore study: one JSON file against per-node databases fed by diffs.

Reproduces sysrepo's datastore-plugin performance study (spec:
``treestore.md``). The package holds the core that every operation goes
through (tree model, schema check, paths, diff, commit, operational data,
running cache, subscriptions), the storage backends (one plugin file each,
in :mod:`.backends`), the 22 tests with their state semantics, the suite
(one worker per backend × N) and its report.
"""

from stratabench.suites.treestore import answer, report, suite

__all__ = ["answer", "report", "suite"]
