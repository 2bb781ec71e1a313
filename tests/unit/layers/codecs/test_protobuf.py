"""Tests of protobuf messages from a schema (stratabench.layers.codecs.protobuf)."""

from __future__ import annotations

from google.protobuf import descriptor

from stratabench.datasets.bulkload import generate, BULKLOAD_SCHEMA
from stratabench.datasets.schema import Field, Schema
from stratabench.layers.codecs import make_format
from stratabench.layers.codecs.protobuf import PACKAGE, message_classes

ROWS = generate(5, 100)


def test_messages_follow_the_schema_with_int64_nanoseconds() -> None:
    record, record_list = message_classes(BULKLOAD_SCHEMA)
    fields = record.DESCRIPTOR.fields
    assert [(f.name, f.number) for f in fields] == [(name, i) for i, name in enumerate(BULKLOAD_SCHEMA.names, 1)]
    types = [f.type for f in fields]
    assert types == [
        descriptor.FieldDescriptor.TYPE_BOOL,
        descriptor.FieldDescriptor.TYPE_INT64,
        descriptor.FieldDescriptor.TYPE_DOUBLE,
        descriptor.FieldDescriptor.TYPE_STRING,
        descriptor.FieldDescriptor.TYPE_INT64,
    ]
    assert record_list.DESCRIPTOR.full_name == f"{PACKAGE}.RecordList"
    assert record_list.DESCRIPTOR.fields_by_name["records"].message_type.full_name == f"{PACKAGE}.Record"


def test_decode_returns_the_wrapper_message() -> None:
    fmt = make_format("protobuf", BULKLOAD_SCHEMA)
    decoded = fmt.decode(fmt.encode(ROWS))
    assert type(decoded).__name__ == "RecordList"
    assert decoded.records[0].time == ROWS[0].time_ns  # type: ignore[attr-defined]
    assert fmt.to_rows(decoded) == ROWS


def test_two_schemas_of_one_name_do_not_collide() -> None:
    one = Schema("same", (Field("a", "int"),))
    two = Schema("same", (Field("a", "str"), Field("b", "list_int")))
    first, second = make_format("protobuf", one), make_format("protobuf", two)
    assert first.to_rows(first.decode(first.encode([(5,)]))) == [(5,)]
    assert second.to_rows(second.decode(second.encode([("x", [1, 2])]))) == [("x", [1, 2])]
