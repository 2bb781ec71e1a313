"""The stores of a run as cells name them: URLs without passwords, namespaces of the run's own.

Cell parameters are written to the results file, so a cell names its store
by the URL with the password masked; inside the worker, :func:`real_url`
finds the full URL again among the run's ``--store`` URLs. Each cell keeps
its keys and tables in a namespace of its own, derived from the run id and
the cell's name (:func:`cell_namespace`), and deletes it when it ends.
"""

from __future__ import annotations

import hashlib
import re

from stratabench.errors import UsageError
from stratabench.options import RunOptions

__all__ = ["cell_namespace", "real_url"]


def real_url(options: RunOptions, shown: str) -> str:
    """The run's ``--store`` URL whose redacted form is ``shown``.

    Raises
    ------
    UsageError
        When no store URL of the run matches (a cell built by another run).
    """
    from stratabench.redact import redact

    for url in options.stores:
        if redact(url) == shown:
            return url
    raise UsageError(f"store {shown} is not among this run's --store URLs")


def cell_namespace(options: RunOptions, suite: str, cell: str) -> str:
    """``{run id}.{suite}.{hash of the cell name}``: unique per run and cell, valid for every store."""
    digest = hashlib.sha1(cell.encode()).hexdigest()[:10]
    run = re.sub(r"[^A-Za-z0-9_.-]", "_", options.run_id)[:60]
    return f"{run}.{suite}.{digest}"
