"""The canonical JSON-lines form: exact spelling, strict types."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from stratabench.datasets.records_json import canonical_hash, canonical_lines
from stratabench.datasets.schema import Field, Schema

SCHEMA = Schema("t", (Field("b", "bool"), Field("i", "int"), Field("f", "float"), Field("s", "str"),
                      Field("t", "time_us"), Field("l", "list_str"), Field("a", "any")))
ROW = (True, 1, 1.0, "é\ud800", datetime(2020, 1, 2, 3, 4, 5, 6000, tzinfo=timezone.utc), ["x"], {"k": None})


def test_one_sorted_compact_line_per_record() -> None:
    assert canonical_lines(SCHEMA, [ROW]) == (
        '{"a":{"k":null},"b":true,"f":1.0,"i":1,"l":["x"],"s":"é\ud800","t":"2020-01-02T03:04:05.006Z"}\n'
    ).encode("utf-8", "surrogatepass")


def test_keys_can_be_the_files_own() -> None:
    schema = Schema("t", (Field("first_name", "str"),))
    assert canonical_lines(schema, [("Ada",)], keys=["first-name"]) == b'{"first-name":"Ada"}\n'


@pytest.mark.parametrize("index, value", [(0, 1), (1, True), (1, 1.0), (2, 1), (4, "2020-01-02T03:04:05Z"),
                                          (4, datetime(2020, 1, 1)), (5, ("x",)), (6, float("nan"))])
def test_a_value_of_another_type_has_no_canonical_form(index: int, value: object) -> None:
    row = list(ROW)
    row[index] = value
    with pytest.raises((TypeError, ValueError)):
        canonical_hash(SCHEMA, [tuple(row)])


def test_an_instant_hashes_the_same_in_any_zone() -> None:
    from zoneinfo import ZoneInfo

    other = list(ROW)
    other[4] = ROW[4].astimezone(ZoneInfo("Asia/Tokyo"))
    assert canonical_hash(SCHEMA, [tuple(other)]) == canonical_hash(SCHEMA, [ROW])
