"""The Datastore v1 ``Entity`` message classes, built from protobuf alone.

The lazy entity must run without ``google-cloud-datastore``: importing its
``datastore_v1.types`` module pulls in proto-plus, gRPC and ``google.api_core``
(about 0.6 s) just to obtain the message class. The wire schema is small and
frozen (``google/datastore/v1/entity.proto``), so this module declares it
here and builds the classes in a private descriptor pool, which never clashes
with the copy proto-plus registers in the default pool when both libraries
are loaded in one process. The bytes are the same on the wire; a test
compares this schema with the installed library's, field by field.

What it cannot do: the classes are not the proto-plus wrappers, and they are
distinct Python classes from ``google.cloud.datastore_v1.types.Entity.pb()``
(messages are exchanged between them as bytes, or read duck-typed).
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, struct_pb2, timestamp_pb2

__all__ = [
    "ArrayValueMessage",
    "EntityMessage",
    "KeyMessage",
    "PartitionIdMessage",
    "SCHEMA_FILE",
    "ValueMessage",
]

#: The file name of the schema in the private pool.
SCHEMA_FILE = "stratabench/systems/lazy/datastore_v1_entity.proto"

_F = descriptor_pb2.FieldDescriptorProto
_OPTIONAL, _REPEATED = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED


def _field(
    name: str, number: int, kind: int, *, label: int = _OPTIONAL, type_name: str = "", oneof: int | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": name, "number": number, "type": kind, "label": label}
    if type_name:
        spec["type_name"] = type_name
    if oneof is not None:
        spec["oneof_index"] = oneof
    return spec


def _schema() -> descriptor_pb2.FileDescriptorProto:
    """``google/datastore/v1/entity.proto``, the parts an entity uses."""
    f = descriptor_pb2.FileDescriptorProto(
        name=SCHEMA_FILE,
        package="google.datastore.v1",
        syntax="proto3",
        dependency=["google/protobuf/struct.proto", "google/protobuf/timestamp.proto", "google/type/latlng.proto"],
    )
    f.message_type.add(
        name="PartitionId",
        field=[
            _field("project_id", 2, _F.TYPE_STRING),
            _field("database_id", 3, _F.TYPE_STRING),
            _field("namespace_id", 4, _F.TYPE_STRING),
        ],
    )
    key = f.message_type.add(
        name="Key",
        field=[
            _field("partition_id", 1, _F.TYPE_MESSAGE, type_name=".google.datastore.v1.PartitionId"),
            _field("path", 2, _F.TYPE_MESSAGE, label=_REPEATED, type_name=".google.datastore.v1.Key.PathElement"),
        ],
    )
    key.nested_type.add(
        name="PathElement",
        field=[
            _field("kind", 1, _F.TYPE_STRING),
            _field("id", 2, _F.TYPE_INT64, oneof=0),
            _field("name", 3, _F.TYPE_STRING, oneof=0),
        ],
        oneof_decl=[descriptor_pb2.OneofDescriptorProto(name="id_type")],
    )
    f.message_type.add(
        name="ArrayValue",
        field=[_field("values", 1, _F.TYPE_MESSAGE, label=_REPEATED, type_name=".google.datastore.v1.Value")],
    )
    f.message_type.add(
        name="Value",
        field=[
            _field("null_value", 11, _F.TYPE_ENUM, type_name=".google.protobuf.NullValue", oneof=0),
            _field("boolean_value", 1, _F.TYPE_BOOL, oneof=0),
            _field("integer_value", 2, _F.TYPE_INT64, oneof=0),
            _field("double_value", 3, _F.TYPE_DOUBLE, oneof=0),
            _field("timestamp_value", 10, _F.TYPE_MESSAGE, type_name=".google.protobuf.Timestamp", oneof=0),
            _field("key_value", 5, _F.TYPE_MESSAGE, type_name=".google.datastore.v1.Key", oneof=0),
            _field("string_value", 17, _F.TYPE_STRING, oneof=0),
            _field("blob_value", 18, _F.TYPE_BYTES, oneof=0),
            _field("geo_point_value", 8, _F.TYPE_MESSAGE, type_name=".google.type.LatLng", oneof=0),
            _field("entity_value", 6, _F.TYPE_MESSAGE, type_name=".google.datastore.v1.Entity", oneof=0),
            _field("array_value", 9, _F.TYPE_MESSAGE, type_name=".google.datastore.v1.ArrayValue", oneof=0),
            _field("meaning", 14, _F.TYPE_INT32),
            _field("exclude_from_indexes", 19, _F.TYPE_BOOL),
        ],
        oneof_decl=[descriptor_pb2.OneofDescriptorProto(name="value_type")],
    )
    entity = f.message_type.add(
        name="Entity",
        field=[
            _field("key", 1, _F.TYPE_MESSAGE, type_name=".google.datastore.v1.Key"),
            _field(
                "properties",
                3,
                _F.TYPE_MESSAGE,
                label=_REPEATED,
                type_name=".google.datastore.v1.Entity.PropertiesEntry",
            ),
        ],
    )
    entity.nested_type.add(
        name="PropertiesEntry",
        field=[
            _field("key", 1, _F.TYPE_STRING),
            _field("value", 2, _F.TYPE_MESSAGE, type_name=".google.datastore.v1.Value"),
        ],
        options=descriptor_pb2.MessageOptions(map_entry=True),
    )
    return f


def _latlng() -> descriptor_pb2.FileDescriptorProto:
    """``google/type/latlng.proto``, declared here to avoid googleapis-common-protos."""
    f = descriptor_pb2.FileDescriptorProto(name="google/type/latlng.proto", package="google.type", syntax="proto3")
    f.message_type.add(
        name="LatLng", field=[_field("latitude", 1, _F.TYPE_DOUBLE), _field("longitude", 2, _F.TYPE_DOUBLE)]
    )
    return f


def _build_pool() -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    for module in (struct_pb2, timestamp_pb2):
        pool.Add(descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb))
    pool.Add(_latlng())
    pool.Add(_schema())
    return pool


_POOL = _build_pool()


def _message_class(name: str) -> Any:
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"google.datastore.v1.{name}"))


#: ``google.datastore.v1.Entity``: a key and a map of property values.
EntityMessage: Any = _message_class("Entity")
#: ``google.datastore.v1.Key``: a partition and a path of (kind, id or name).
KeyMessage: Any = _message_class("Key")
#: ``google.datastore.v1.PartitionId``: project, database and namespace.
PartitionIdMessage: Any = _message_class("PartitionId")
#: ``google.datastore.v1.Value``: one typed value and its index flag.
ValueMessage: Any = _message_class("Value")
#: ``google.datastore.v1.ArrayValue``: the values of a repeated property.
ArrayValueMessage: Any = _message_class("ArrayValue")
