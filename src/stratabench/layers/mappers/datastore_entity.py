"""The ``datastore`` mapper: google-cloud-datastore's generic ``Entity`` (a dict with a key).

Needs ``google-cloud-datastore`` (extra ``entities``). This is today's
equivalent of the 2016 study's ``datastore.GetAsync`` column: bytes are
parsed (upb) and converted by the library's own
``helpers.entity_from_protobuf``, which stops at the dict-like entity and
builds no model. Encoding goes back through ``helpers.entity_to_protobuf``
(a proto-plus message) and serializes its raw message.

What it cannot do: read names that are not stored (``KeyError``, as the
library does), or keep values' index flags apart from the entity's
``exclude_from_indexes`` set.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratabench.errors import DataError
from stratabench.layers.mappers import MAPPERS
from stratabench.layers.mappers.base import KeyPath, Mapper

__all__ = ["DatastoreEntityMapper"]


@MAPPERS.register("datastore", requires=("google.cloud.datastore",), extra="entities")
class DatastoreEntityMapper(Mapper):
    """google.cloud.datastore.Entity, converted by the library's helpers."""

    label = "datastore.Entity"

    def __init__(self, dataset: Any) -> None:
        super().__init__(dataset)
        from google.cloud.datastore import helpers
        from google.cloud.datastore_v1.types import entity as entity_pb2

        self.message_class: Any = entity_pb2.Entity.pb()
        self._parse: Any = self.message_class.FromString
        self._from_message: Any = helpers.entity_from_protobuf
        self._to_message: Any = helpers.entity_to_protobuf

    def decode_many(self, blobs: Sequence[bytes | None], keys: Sequence[object] | None = None) -> list[Any]:
        from google.protobuf.message import DecodeError

        parse, convert = self._parse, self._from_message
        try:
            return [None if blob is None else convert(parse(blob)) for blob in blobs]
        except DecodeError as exc:
            raise DataError(f"stored {self.dataset.kind} bytes do not parse as a Datastore v1 Entity: {exc}") from None

    def from_message(self, message: Any) -> Any:
        """A raw (upb) v1 message → ``datastore.Entity``: the library's conversion step alone."""
        return self._from_message(message)

    def to_message(self, entity: Any) -> Any:
        """``datastore.Entity`` → proto-plus v1 message (the library's conversion step alone)."""
        return self._to_message(entity)

    def read(self, objects: Sequence[Any], names: Sequence[str]) -> None:
        for entity in objects:
            if entity is not None:
                for name in names:
                    entity[name]

    def values(self, obj: Any) -> tuple[KeyPath, dict[str, Any]]:
        flat = obj.key.flat_path
        path = tuple((flat[i], flat[i + 1]) for i in range(0, len(flat), 2))
        return path, dict(obj)

    def encode(self, obj: Any) -> bytes:
        return bytes(self._to_message(obj)._pb.SerializeToString())
