"""The systems under test that stratabench builds itself, apart from the studies that measure them.

- :mod:`.lazy` — the lazy entity: Datastore entities read like ndb models,
  converted on first read (measured by the entities study's mappers);
- :mod:`.treestore` — a configuration datastore: tree model, schema check,
  paths, diff, commit, subscriptions and its storage backends (measured by
  the treestore study);
- :mod:`.parking` — the parking service in Python: its protocol and rules,
  its two servers, the HTTP front a server process runs, and the client
  that drives any server through the study's test cases (measured by the
  parking study).

A system imports nothing of the harness (``suites``, ``engine``, ``report``,
``cli``, ...) and nothing of another system, so a server under test carries
only itself in its memory; ``lint-imports`` checks both.
"""
