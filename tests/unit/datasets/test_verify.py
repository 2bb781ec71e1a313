"""verify_rows's fast path: rows equal in type and bits pass without hashing; anything else is hashed."""

from __future__ import annotations

from functools import partial

import pytest

from stratabench.datasets.bulkload import BULKLOAD_SCHEMA, canonical_hash
from stratabench.datasets.verify import exactly_equal, first_difference, verify_rows

ROWS = [(True, 1, 0.0, "a", 5), (False, -2, 2.5, "b", 6)]


def verify(rows: list[tuple[object, ...]]) -> tuple[str, str | None]:
    integrity = verify_rows(rows, expected_hash=canonical_hash(ROWS), hash_rows=canonical_hash,
                            expected_rows=lambda: ROWS, difference=partial(first_difference, BULKLOAD_SCHEMA))
    return integrity.actual, integrity.detail


def test_identical_rows_pass_without_hashing() -> None:
    hashed = []
    integrity = verify_rows(list(ROWS), expected_hash="the-hash", hash_rows=lambda rows: hashed.append(rows) or "x",
                            expected_rows=lambda: ROWS, difference=lambda a, b: None)
    assert integrity.ok and integrity.actual == "the-hash" and hashed == []


@pytest.mark.parametrize(("row", "field"), [
    ((1, 1, 0.0, "a", 5), "bool"),          # 1 == True
    ((True, 1.0, 0.0, "a", 5), "int"),      # 1.0 == 1
    ((True, 1, -0.0, "a", 5), "float"),     # -0.0 == 0.0, but not in bits nor in JSON
    ((True, 1, 0.0, "a", 6), "time"),
])
def test_values_equal_in_python_but_not_in_type_or_bits_are_caught(row: tuple[object, ...], field: str) -> None:
    rows = [row, ROWS[1]]
    assert not exactly_equal(ROWS, rows)
    actual, detail = verify(rows)
    assert actual != canonical_hash(ROWS)
    assert detail is not None and f"record 0, field {field}" in detail


def test_rows_as_lists_are_hashed_and_pass() -> None:
    assert not exactly_equal(ROWS, [list(row) for row in ROWS])
    assert verify([list(row) for row in ROWS]) == (canonical_hash(ROWS), None)
