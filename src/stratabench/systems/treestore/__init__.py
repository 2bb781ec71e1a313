"""A configuration datastore: one tree of data under a schema, stored by pluggable backends.

Every operation goes through :class:`.core.Core`: the tree model
(:mod:`.tree`), the schema and its check (:mod:`.schema`, :mod:`.validate`),
paths (:mod:`.paths`), diffs and their records (:mod:`.diff`,
:mod:`.records`), operational data, the running cache and change
subscriptions (:mod:`.subscriptions`). A commit gets its working tree and
its check from one of two commit cores (:mod:`.cores`: the study's full copy
and check, or an incremental one on a persistent tree, :mod:`.persistent`).
Storage backends are one plugin file each in :mod:`.backends`. The treestore study (:mod:`stratabench.suites.treestore`)
measures it; see ``docs/studies/treestore.md``.
"""
