"""The project's own v1 Entity classes are wire-compatible with google-cloud-datastore's."""

from __future__ import annotations

from typing import Any

from stratabench.layers.mappers.ndb_toolkit import generate
from stratabench.systems.lazy import messages


def _fields(descriptor: Any, seen: set[str] | None = None) -> dict[str, Any]:
    """Every message reachable from ``descriptor``: field name → (number, type, label, oneof, message type)."""
    seen = set() if seen is None else seen
    shape: dict[str, Any] = {}
    if descriptor.full_name in seen:
        return shape
    seen.add(descriptor.full_name)
    fields = {}
    for field in descriptor.fields:
        oneof = field.containing_oneof.name if field.containing_oneof else None
        target = field.message_type.full_name if field.message_type else None
        fields[field.name] = (field.number, field.type, field.is_repeated, oneof, target)
        if field.message_type is not None:
            shape.update(_fields(field.message_type, seen))
    shape[descriptor.full_name] = fields
    return shape


def test_schema_matches_the_installed_datastore_library() -> None:
    from google.cloud.datastore_v1.types import entity as entity_pb2

    assert _fields(messages.EntityMessage.DESCRIPTOR) == _fields(entity_pb2.Entity.pb().DESCRIPTOR)


def test_bytes_cross_between_the_two_classes_unchanged() -> None:
    from google.cloud.datastore_v1.types import entity as entity_pb2

    for blob in generate("mixed", 10, "model").blobs:
        theirs = entity_pb2.Entity.pb().FromString(blob)
        ours = messages.EntityMessage.FromString(blob)
        assert ours.SerializeToString(deterministic=True) == theirs.SerializeToString(deterministic=True)


def test_the_private_pool_does_not_touch_the_default_pool() -> None:
    from google.protobuf import descriptor_pool

    assert messages.EntityMessage.DESCRIPTOR.file.pool is not descriptor_pool.Default()
    assert messages.EntityMessage.DESCRIPTOR.file.name == messages.SCHEMA_FILE
