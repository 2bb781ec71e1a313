"""The mapper contract's integrity check: what it says when objects are wrong."""

from __future__ import annotations

from stratabench.layers.mappers.base import verify_objects
from stratabench.layers.mappers.ndb_toolkit import generate
from stratabench.layers.mappers.protobuf_message import ProtobufMessageMapper
from stratabench.systems.lazy.messages import EntityMessage


def test_a_missing_entity_is_named() -> None:
    dataset = generate("text", 10, "model")
    mapper = ProtobufMessageMapper(dataset)
    objects = mapper.decode_many([None, *dataset.get_blobs[1:]])
    integrity = verify_objects(mapper, objects, dataset.get_hash)
    assert not integrity.ok and integrity.detail == "a stored entity came back missing (None)"


def test_an_unexpected_key_is_named() -> None:
    dataset = generate("text", 10, "model")
    message = EntityMessage.FromString(dataset.blob(dataset.get_ids[0]))
    message.key.path[0].id = 500
    mapper = ProtobufMessageMapper(dataset)
    integrity = verify_objects(mapper, mapper.decode_many([message.SerializeToString()]), dataset.get_hash)
    assert integrity.detail == "unexpected key (('TextModel10', 500),)"


def test_a_dropped_property_is_named() -> None:
    dataset = generate("text", 10, "model")
    ident = dataset.get_ids[0]
    message = EntityMessage.FromString(dataset.blob(ident))
    del message.properties["prop_e"]
    mapper = ProtobufMessageMapper(dataset)
    integrity = verify_objects(mapper, mapper.decode_many([message.SerializeToString()]), dataset.get_hash)
    assert integrity.detail is not None and "property 'prop_e' is None, expected '" in integrity.detail
