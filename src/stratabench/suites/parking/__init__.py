"""The parking study: one OLTP HTTP service, four implementations, one test suite.

The service itself (schema, protocol, the Python servers, the driver) is
:mod:`stratabench.systems.parking`; this package holds the study:

- :mod:`.process` — starting a server (Python or Go) as a process;
- :mod:`.measure`, :mod:`.suite` and :mod:`.report` — configurations
  measured in batches, the study's tables; :mod:`.codesize` — each server's
  source size;
- :mod:`.load` — the same servers under many clients at once.
"""

from stratabench.suites.parking import answer, report, suite

__all__ = ["answer", "report", "suite"]
