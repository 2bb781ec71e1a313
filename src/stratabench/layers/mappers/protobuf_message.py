"""The ``protobuf`` mapper: the raw Datastore v1 ``Entity`` message, no object model.

Needs only ``protobuf`` (the message class is the project's own, see
:mod:`stratabench.systems.lazy.messages`; the same wire and the same upb parser as
``google.cloud.datastore_v1``'s). It is the baseline of the entities suite:
"bytes → v1 message" is the raw parse every other path pays for, and
:meth:`ProtobufMessageMapper.to_dict` is the plain dict built from a parsed
message that the lazy entity's bulk materialize is held to.

What it cannot do: a read converts each value with the reference decoder, so
timestamps come back timezone-aware whatever the declared type; reading a
name that is not stored returns ``None`` rather than raising.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stratabench.errors import DataError
from stratabench.layers.mappers import MAPPERS
from stratabench.layers.mappers.base import KeyPath, Mapper

__all__ = ["ProtobufMessageMapper"]


@MAPPERS.register("protobuf", requires=("google.protobuf",))
class ProtobufMessageMapper(Mapper):
    """The raw v1 Entity message (upb), values converted by the reference decoder on read."""

    label = "v1 message"

    def __init__(self, dataset: Any) -> None:
        super().__init__(dataset)
        from stratabench.datasets.entities import message_values, reference_value
        from stratabench.systems.lazy.messages import EntityMessage

        self.message_class: Any = EntityMessage
        self._parse: Any = EntityMessage.FromString
        self._convert: Any = reference_value
        self._message_values: Any = message_values

    def decode_many(self, blobs: Sequence[bytes | None], keys: Sequence[object] | None = None) -> list[Any]:
        from google.protobuf.message import DecodeError

        parse = self._parse
        try:
            return [None if blob is None else parse(blob) for blob in blobs]
        except DecodeError as exc:
            raise DataError(f"stored {self.dataset.kind} bytes do not parse as a Datastore v1 Entity: {exc}") from None

    def read(self, objects: Sequence[Any], names: Sequence[str]) -> None:
        convert = self._convert
        for message in objects:
            if message is not None:
                properties = message.properties
                for name in names:
                    value = properties.get(name)
                    if value is not None:
                        convert(value)

    def to_dict(self, message: Any) -> dict[str, Any]:
        """Every property of a parsed message as a plain dict (the materialize baseline)."""
        values: dict[str, Any] = self._message_values(message)[1]
        return values

    def values(self, obj: Any) -> tuple[KeyPath, dict[str, Any]]:
        path, values = self._message_values(obj)
        return path, values

    def encode(self, obj: Any) -> bytes:
        return bytes(obj.SerializeToString())
