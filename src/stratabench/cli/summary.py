"""``--summary FILE`` of ``compare`` and ``ab``: the Markdown summary written for a pull request or a CI job.

The summary goes to ``FILE`` when given, and is appended to the file
``$GITHUB_STEP_SUMMARY`` names when that is set (GitHub Actions shows it on
the run's page), so a workflow needs no extra step.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from stratabench.errors import OutputError

__all__ = ["STEP_SUMMARY", "add_summary_argument", "write_summary"]

#: The variable GitHub Actions sets to the file of a job step's summary.
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def add_summary_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--summary", metavar="FILE",
                        help=f"also write a Markdown summary fit for a pull-request comment to FILE (it is "
                        f"appended to ${STEP_SUMMARY} too when that is set, as in GitHub Actions)")


def write_summary(markdown: str, path: str | None) -> None:
    """Write ``markdown`` to ``path`` (replacing it) and append it to ``$GITHUB_STEP_SUMMARY`` when set."""
    targets = [(Path(path), "w")] if path else []
    step = os.environ.get(STEP_SUMMARY)
    if step:
        targets.append((Path(step), "a"))
    for target, mode in targets:
        try:
            with target.open(mode, encoding="utf-8") as file:
                file.write(markdown)
        except OSError as error:
            raise OutputError(f"cannot write the summary to {target}: {error.strerror or error}") from None
