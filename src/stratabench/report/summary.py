"""A comparison's summary in Markdown, fit for a pull-request comment or a CI job's summary page.

It opens with one bold verdict line and the comparison's summary line, then
shows only the cells that moved (or could not be judged) and the exact
metrics that changed, so a reviewer sees the news first; every compared cell
follows folded in a ``<details>`` block. GitHub renders both the comment and
``$GITHUB_STEP_SUMMARY`` from this Markdown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from stratabench.report.formats.markdown import MarkdownReporter
from stratabench.report.table import Table

__all__ = ["markdown_summary"]


def markdown_summary(title: str, verdict: str, table: Table, news: Callable[[dict[str, Any]], bool],
                     extra: Sequence[str] = ()) -> str:
    """The summary of ``table`` (one row per compared cell) as Markdown.

    Parameters
    ----------
    title
        The heading: what was compared with what.
    verdict
        One line, shown bold: passed, or what failed.
    table
        Every compared cell; its notes (the summary line first) go under the heading.
    news
        Whether a row is worth a reviewer's eye (moved, or cannot be judged).
    extra
        Lines listed after the changed cells (exact metrics that moved).
    """
    reporter = MarkdownReporter()
    changed = [row for row in table.rows if news(row)]
    blocks = [f"## {title}", f"**{verdict}**", *(table.notes[:1])]
    if changed:
        blocks.append(_body(reporter.render([replace(table, title=f"{len(changed)} cells moved", rows=changed,
                                                     notes=[])])))
    else:
        blocks.append("No cell moved.")
    if extra:
        blocks.append("\n".join(f"- {line}" for line in extra))
    every = _body(reporter.render([replace(table, title=f"every compared cell ({len(table.rows)})",
                                           notes=table.notes[1:])]))
    blocks.append(f"<details><summary>every compared cell ({len(table.rows)})</summary>\n\n{every}\n</details>")
    return "\n\n".join(blocks) + "\n"


def _body(markdown: str) -> str:
    """A rendered table without its ``###`` heading line: the summary gives its own."""
    heading, _, rest = markdown.partition("\n")
    return f"#### {heading.removeprefix('### ')}\n{rest}".rstrip()
