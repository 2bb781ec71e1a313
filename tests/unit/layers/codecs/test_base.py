"""Tests of the codec contract's building blocks (stratabench.layers.codecs.base)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from stratabench.datasets.bulkload import BULKLOAD_SCHEMA
from stratabench.datasets.schema import EPOCH, Field, Row, Schema, datetime_from_us, us_from_datetime
from stratabench.datasets.verify import first_difference, verify_rows
from stratabench.errors import DataError, UnavailableError, UnknownNameError, UsageError
from stratabench.layers.codecs import make_format
from stratabench.layers.codecs.base import (
    Codec,
    Format,
    FunctionFormat,
    json_value,
    row_converter,
    thawed_rows,
)

SCHEMA = Schema("pair", (Field("a", "int"), Field("b", "str")))


def test_field_and_schema_validate_their_input() -> None:
    with pytest.raises(UsageError, match="not a Python identifier"):
        Field("not-ok", "int")
    with pytest.raises(UsageError, match="not a Python identifier"):
        Field("class", "int")
    with pytest.raises(UsageError, match="unknown type 'decimal'"):
        Field("x", "decimal")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="has no fields"):
        Schema("empty", ())
    with pytest.raises(UsageError, match="repeats a field name"):
        Schema("twice", (Field("a", "int"), Field("a", "str")))


def test_schema_from_a_list_is_frozen_and_hashable() -> None:
    schema = Schema("pair", [Field("a", "int"), Field("b", "str")])  # type: ignore[arg-type]
    assert schema == SCHEMA and hash(schema) == hash(SCHEMA)
    assert schema.names == ("a", "b") and schema.types == {"int", "str"}
    assert BULKLOAD_SCHEMA.names == ("bool", "int", "float", "string", "time")


def test_microsecond_conversions_are_exact() -> None:
    for us in (0, 1, -1, 2**52 + 1, -(10**15) - 7):
        assert us_from_datetime(datetime_from_us(us)) == us
    assert datetime_from_us(0) == EPOCH and EPOCH.tzinfo is timezone.utc


def test_row_converter_reads_and_writes_every_way() -> None:
    rows = [(1, "x"), (2, "y")]
    as_dicts = row_converter(SCHEMA, write="dict")(rows)
    assert as_dicts == [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]
    assert row_converter(SCHEMA, read="key")(as_dicts) == rows
    objects = [SimpleNamespace(a=1, b="x")]
    assert row_converter(SCHEMA, read="attr")(objects) == [(1, "x")]
    made = row_converter(SCHEMA, write="call", namespace={"_make": lambda a, b: f"{a}{b}"})(rows)
    assert made == ["1x", "2y"]
    keyed = row_converter(SCHEMA, read="key", keys=("A", "B"))([{"A": 3, "B": "z"}])
    assert keyed == [(3, "z")]


def test_row_converter_applies_conversions_by_type() -> None:
    convert = row_converter(SCHEMA, convert={"int": "_double({})"}, namespace={"_double": lambda v: v * 2})
    assert convert([(2, "s")]) == [(4, "s")]
    single = Schema("one", (Field("only", "int"),))
    assert row_converter(single)([(5,)]) == [(5,)]  # a 1-tuple, not a parenthesised value
    with pytest.raises(UsageError, match="3 keys for 2 fields"):
        row_converter(SCHEMA, keys=("a", "b", "c"))


def test_json_value_and_thawed_rows_restore_lists_and_dicts() -> None:
    from types import MappingProxyType

    assert json_value((1, (2, {"k": (3,)}))) == [1, [2, {"k": [3]}]]
    assert json_value(MappingProxyType({"a": (1,)})) == {"a": [1]}
    schema = Schema("t", (Field("tags", "list_str"), Field("n", "list_int"), Field("v", "any")))
    assert thawed_rows(schema)([(("a",), (1, 2), ({"x": (1,)},))]) == [(["a"], [1, 2], [{"x": [1]}])]


def test_first_difference_is_strict_about_types() -> None:
    schema = Schema("t", (Field("x", "float"), Field("y", "list_int")))
    assert first_difference(schema, [(0.0, [1])], [(0.0, [1])]) is None
    assert first_difference(schema, [(0.0, [1])], [(-0.0, [1])]) == "record 0, field x: expected float 0.0, got float -0.0"
    assert "expected float 1.0, got int 1" in str(first_difference(schema, [(1.0, [1])], [(1, [1])]))
    assert "got tuple (1,)" in str(first_difference(schema, [(1.0, [1])], [(1.0, (1,))]))
    flag = Schema("f", (Field("b", "bool"),))
    assert "expected bool True, got int 1" in str(first_difference(flag, [(True,)], [(1,)]))
    assert first_difference(schema, [(0.0, [1])] * 2, [(0.0, [1])]) == "expected 2 records, got 1"
    assert first_difference(schema, [(0.0, [1])], [(0.0,)]) == "record 0: expected 2 fields, got 1"


def _hash(rows: Sequence[Row]) -> str:
    return "|".join(repr(row) for row in rows)


def test_verify_rows_passes_and_fails_with_a_reason() -> None:
    rows = [(1, "x")]
    difference = partial(first_difference, SCHEMA)
    ok = verify_rows(rows, expected_hash=_hash(rows), hash_rows=_hash, expected_rows=lambda: rows, difference=difference)
    assert ok.ok and ok.detail is None
    bad = verify_rows([(1, "y")], expected_hash=_hash(rows), hash_rows=_hash, expected_rows=lambda: rows, difference=difference)
    assert not bad.ok and bad.detail == "record 0, field b: expected str 'x', got str 'y'"


def test_verify_rows_reports_rows_without_canonical_form() -> None:
    def refuse(rows: Sequence[Row]) -> str:
        raise TypeError("expected a float, got int 1")

    # A row as a list is not shown equal at C speed (exactly_equal), so it is hashed, which refuses it.
    result = verify_rows([[1, "x"]], expected_hash="h", hash_rows=refuse, expected_rows=lambda: [(1, "x")], difference=partial(first_difference, SCHEMA))
    assert not result.ok and result.actual == "none"
    assert result.detail == "the rows have no canonical form: TypeError: expected a float, got int 1"


def _failing(error: Exception) -> Any:
    def fail(value: object) -> Any:
        raise error

    return fail


def test_library_errors_become_one_line_data_errors() -> None:
    fmt = FunctionFormat(
        "fake",
        SCHEMA,
        "typed",
        encode=_failing(OverflowError("int too big\nto convert")),
        decode=_failing(ValueError("bad byte " + "x" * 300)),
        to_rows=_failing(KeyError("a")),
    )
    with pytest.raises(DataError, match="^fake/typed: cannot encode 1 pair rows: OverflowError: int too big to convert$"):
        fmt.encode([(1, "x")])
    with pytest.raises(DataError) as raised:
        fmt.decode(b"12345")
    assert str(raised.value).startswith("fake/typed: cannot decode 5 bytes as pair records")
    assert str(raised.value).endswith("...") and len(str(raised.value)) < 300
    with pytest.raises(DataError, match="decoded value is not a list of pair records: KeyError: 'a'"):
        fmt.to_rows(object())


def test_our_own_errors_pass_through_unwrapped() -> None:
    fmt = FunctionFormat("fake", SCHEMA, "typed", encode=bytes, decode=_failing(UnavailableError("gone")), to_rows=list)
    with pytest.raises(UnavailableError, match="^gone$"):
        fmt.decode(b"")


class _TextCodec(Codec):
    """A codec defined by the test: rows as repr text."""

    name = "text"
    modes = ("typed", "raw")
    unsupported_types = {"bytes": "text has no bytes"}

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        return FunctionFormat(self.name, schema, mode, encode=lambda r: repr(r).encode(), decode=eval, to_rows=list)


def test_codec_format_checks_mode_and_field_types() -> None:
    codec = _TextCodec()
    assert codec.format(SCHEMA).mode == "typed"
    assert codec.format(SCHEMA, "raw").mode == "raw"
    with pytest.raises(UsageError, match="codec 'text' has no mode 'zip'; its modes: typed, raw"):
        codec.format(SCHEMA, "zip")
    with pytest.raises(UnavailableError, match=r"text/typed cannot carry field 'blob' \(bytes\): text has no bytes"):
        codec.format(Schema("b", (Field("blob", "bytes"),)))


def test_make_format_looks_codecs_up_by_name(tmp_path: Path) -> None:
    assert make_format("json", SCHEMA).label == "json/typed"
    with pytest.raises(UnknownNameError, match="unknown codec 'yaml'"):
        make_format("yaml", SCHEMA)


def test_format_repr_names_it() -> None:
    assert repr(make_format("pickle", SCHEMA, "raw")) == "<FunctionFormat pickle/raw schema=pair exact=True>"
