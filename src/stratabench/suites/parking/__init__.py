"""The parking study: one OLTP HTTP service, four implementations, one test suite.

Spec: ``specs/parking.md`` (the domain, the ten API functions, the suite of
five test cases and the published tables). This package holds

- :mod:`.schema` — the tables of spec section 6 for SQLite, PostgreSQL and
  MariaDB, the seed rows, and the invariants of section 9;
- :mod:`.protocol` — what every server shares: query decoding, protocol
  versions, the answer envelope, the quarter-hour rule;
- :mod:`.orm_model` and :mod:`.orm_service` — ``python-orm``, SQLAlchemy 2's
  ORM shaped as the study's server;
- :mod:`.core_service` — ``python-core``, the same transactions through
  SQLAlchemy Core with the fewest statements;
- :mod:`.http_server` and :mod:`.serve` — the HTTP front both Python servers
  share and the process entry point the suite starts (the same contract as
  the Go servers);
- :mod:`.statements` — SQL statements counted by kind;
- :mod:`.driver` — the spec's test suite as a client, also the conformance
  test of every server; :mod:`.fuzz` — malformed calls; :mod:`.invariants`;
- :mod:`.measure`, :mod:`.suite` and :mod:`.report` — the study as a suite
  of stratabench: configurations measured in batches, the study's tables.

Nothing here imports SQLAlchemy at module import time except the modules
that need it, so listing suites never requires the ``parking`` extra.
"""

from stratabench.suites.parking import answer, report, suite

__all__ = ["answer", "report", "suite"]
