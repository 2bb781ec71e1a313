"""Verification of decoded rows against a dataset's canonical hash.

:class:`Integrity` is the outcome every verifying layer (codecs, mappers)
returns and the results record; it lives here, at the bottom floor, so that
layers import it downward.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter

from stratabench.datasets.schema import Row, Schema

__all__ = ["Integrity", "exactly_equal", "first_difference", "one_line_cause", "verify_rows"]

# How much of a library's error message to keep in ours (one line, readable).
_MAX_CAUSE = 160


@dataclass(frozen=True)
class Integrity:
    """The outcome of verifying one result of an operation.

    Attributes
    ----------
    expected
        The dataset's canonical hash.
    actual
        The hash of what the operation returned.
    detail
        On a mismatch, one line naming the first difference (record, field).
    """

    expected: str
    actual: str
    detail: str | None = None

    @property
    def ok(self) -> bool:
        return self.expected == self.actual


def one_line_cause(error: BaseException) -> str:
    """A library error as one readable line: its type and message, cut at 160 characters."""
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= _MAX_CAUSE else text[: _MAX_CAUSE - 3] + "..."



def _same(expected: object, actual: object) -> bool:
    # Types first: True == 1 and 1 == 1.0 in Python, but not in the
    # canonical form; repr for floats tells -0.0 from 0.0.
    if type(expected) is not type(actual):
        return False
    if isinstance(expected, float):
        return repr(expected) == repr(actual)
    if isinstance(expected, (list, tuple)):
        assert isinstance(actual, (list, tuple))
        return len(expected) == len(actual) and all(map(_same, expected, actual))
    if isinstance(expected, dict):
        assert isinstance(actual, dict)
        return expected.keys() == actual.keys() and all(_same(value, actual[key]) for key, value in expected.items())
    return expected == actual


def _show(value: object) -> str:
    text = f"{type(value).__name__} {value!r}"
    return text if len(text) <= 80 else text[:77] + "..."


def first_difference(schema: Schema, expected: Sequence[Row], actual: Sequence[Row]) -> str | None:
    """Name the first record and field where ``actual`` differs from ``expected``.

    Values must match in type and value (``1`` is not ``1.0`` nor ``True``,
    ``-0.0`` is not ``0.0``).

    Returns
    -------
    str or None
        One line, for example ``record 3600, field float: expected float
        2.5e-05, got float 2.4e-05``; ``None`` when the rows are the same.
    """
    for index, (want, got) in enumerate(zip(expected, actual)):
        if len(got) != len(schema.fields):
            return f"record {index}: expected {len(schema.fields)} fields, got {len(got)}"
        for field, want_value, got_value in zip(schema.fields, want, got):
            if not _same(want_value, got_value):
                return f"record {index}, field {field.name}: expected {_show(want_value)}, got {_show(got_value)}"
    if len(expected) != len(actual):
        return f"expected {len(expected):,} records, got {len(actual):,}"
    return None


def exactly_equal(expected: Sequence[Row], actual: Sequence[Row]) -> bool:
    """Whether ``actual`` holds the same records as ``expected`` in type and bits, checked at C speed.

    Equal values are not enough (``True == 1 == 1.0``, ``-0.0 == 0.0``), so on
    top of the rows' equality each field's type must be the one type its
    column has in ``expected``, and float fields must be equal bit for bit.
    ``False`` means "not shown equal this way" (a column of mixed types, rows
    that are lists): the caller then hashes, which decides exactly.
    """
    if len(expected) != len(actual) or not expected or expected != actual:
        return False
    for column in range(len(expected[0])):
        field = itemgetter(column)
        kinds = set(map(type, map(field, expected)))
        if len(kinds) != 1 or set(map(type, map(field, actual))) != kinds:
            return False
        if kinds == {float} and array("d", map(field, expected)).tobytes() != array("d", map(field, actual)).tobytes():
            return False
    return True


def verify_rows(
    rows: Sequence[Row],
    *,
    expected_hash: str,
    hash_rows: Callable[[Sequence[Row]], str],
    expected_rows: Callable[[], Sequence[Row]],
    difference: Callable[[Sequence[Row], Sequence[Row]], str | None],
) -> Integrity:
    """Check decoded rows against a dataset's canonical hash (outside timing).

    Parameters
    ----------
    rows
        What :meth:`Format.to_rows` returned for one decode.
    expected_hash
        The dataset's canonical hash.
    hash_rows
        The dataset's canonical hash function of rows
        (``bulkload.canonical_hash``).
    expected_rows
        The dataset's rows, whose canonical hash is ``expected_hash``. Rows
        :func:`exactly_equal` to them have that hash by definition, so the
        check skips hashing (0.7 s for bulkload's 100,000 records, about a
        tenth of that this way); other rows are hashed, and compared field
        by field on a mismatch.
    difference
        Names the first differing record and field of (expected, actual):
        the dataset's own (``bulkload.first_difference``), or
        ``functools.partial(first_difference, schema)`` for any schema.

    Returns
    -------
    Integrity
        With ``detail`` set to one line on a mismatch.

    Examples
    --------
    >>> from functools import partial
    >>> from stratabench.datasets.bulkload import BULKLOAD_SCHEMA
    >>> rows = [(True, 1, 0.5, "A", 0)]
    >>> verify_rows(rows, expected_hash="x", hash_rows=lambda r: "y", expected_rows=lambda: [(True, 1, 0.5, "A", 1)],
    ...             difference=partial(first_difference, BULKLOAD_SCHEMA)).detail
    'record 0, field time: expected int 1, got int 0'
    """
    expected = expected_rows()  # read once: bulkload's come from the dataset cache on disk
    if exactly_equal(expected, rows):
        return Integrity(expected_hash, expected_hash)
    try:
        actual = hash_rows(rows)
        problem = None
    except (TypeError, ValueError, AttributeError, IndexError) as error:
        actual, problem = "none", f"the rows have no canonical form: {one_line_cause(error)}"
    if actual == expected_hash:
        return Integrity(expected_hash, actual)
    detail = difference(expected, rows)
    if detail is None:
        detail = problem or "every record matches field by field, yet the hash differs; check the canonical form"
    return Integrity(expected_hash, actual, detail)
