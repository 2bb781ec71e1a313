"""The raw-message mapper: the plain dict baseline and reads of stored values."""

from __future__ import annotations

import datetime

from stratabench.layers.mappers.ndb_toolkit import generate
from stratabench.layers.mappers.protobuf_message import ProtobufMessageMapper


def test_to_dict_is_every_stored_property_with_aware_timestamps() -> None:
    dataset = generate("mixed", 10, "model")
    mapper = ProtobufMessageMapper(dataset)
    (message,) = mapper.decode_many([dataset.blob(2)])
    values = mapper.to_dict(message)
    expected = dataset.values(2)
    assert values.keys() == expected.keys()
    assert values["prop_f"] == expected["prop_f"].replace(tzinfo=datetime.timezone.utc)
    assert values["prop_h"] == expected["prop_h"]


def test_reading_an_absent_name_is_not_an_error() -> None:
    dataset = generate("text", 10, "model")
    mapper = ProtobufMessageMapper(dataset)
    mapper.read(mapper.decode_many(dataset.get_blobs), ["prop_a", "absent"])


def test_encode_is_the_serialized_message() -> None:
    dataset = generate("text", 10, "model")
    mapper = ProtobufMessageMapper(dataset)
    (message,) = mapper.decode_many([dataset.blob(1)])
    assert mapper.encode(message) == message.SerializeToString()
