"""The parking service in Python: one OLTP HTTP service, two implementations.

- :mod:`.schema` — the tables for SQLite, PostgreSQL and MariaDB, the seed
  rows; :mod:`.invariants` — what must hold between them after any run;
- :mod:`.protocol` — what every server shares: query decoding, protocol
  versions, the answer envelope, the quarter-hour rule; :mod:`.rules` — the
  business rules both Python servers apply;
- :mod:`.servers` — ``python-orm`` (SQLAlchemy 2's ORM, with
  :mod:`.orm_model`) and ``python-core`` (SQLAlchemy Core, fewest statements);
- :mod:`.http_server` and :mod:`.serve` — the HTTP front both Python servers
  share and the process entry point (the same contract as the Go servers);
- :mod:`.statements` — SQL statements counted by kind;
- :mod:`.driver` — the study's test cases as a client, also the conformance
  test of every server; :mod:`.fuzz` — malformed calls.

The parking study (:mod:`stratabench.suites.parking`) measures these servers
and the Go ones; see ``docs/studies/parking.md``. Nothing here imports
SQLAlchemy at module import time except the modules that need it.
"""
