"""Reading JSON Lines: one JSON object per line, blank lines skipped.

The one reading loop behind results files, the user's record files and the
Go programs' output. Each reader keeps its own words for a bad line (its
error class and what to do differ), so the loop hands a :class:`BadLine` to
the reader's ``bad_line`` function and raises what it returns.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["BadLine", "NestedTooDeeply", "json_objects"]


class NestedTooDeeply(ValueError):
    """A line whose arrays and objects nest deeper than the decoder's stack allows."""


@dataclass(frozen=True)
class BadLine:
    """A line that is not one JSON object.

    Attributes
    ----------
    number
        Its 1-based line number.
    text
        The line as read.
    error
        Why it did not decode (a :class:`json.JSONDecodeError`, or the
        ``ValueError`` of a stricter decoder); ``None`` when it decoded to
        something other than an object.
    value
        What it decoded to, when ``error`` is ``None``.
    """

    number: int
    text: str
    error: ValueError | None
    value: Any = None


def json_objects(
    lines: Iterable[str],
    bad_line: Callable[[BadLine], Exception],
    *,
    decode: Callable[[str], Any] = json.loads,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line, as it is read.

    Parameters
    ----------
    lines
        Text lines, read lazily (a file, a pipe), so a long stream is never
        held whole.
    bad_line
        Builds the error to raise for a line that is not one JSON object.
    decode
        Parses one line (default :func:`json.loads`); a ``ValueError`` from
        it marks the line bad.
    """
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = decode(line)
        except ValueError as error:
            raise bad_line(BadLine(number, line, error)) from error
        except RecursionError:
            # Thousands of nested arrays exhaust the decoder's stack: a bad line, never a crash.
            raise bad_line(BadLine(number, line, NestedTooDeeply("nested too deeply to read"))) from None
        if not isinstance(value, dict):
            raise bad_line(BadLine(number, line, None, value))
        yield number, value
