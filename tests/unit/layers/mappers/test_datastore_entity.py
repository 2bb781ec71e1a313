"""The datastore mapper: the library's conversion steps, alone and together."""

from __future__ import annotations

from stratabench.layers.mappers.datastore_entity import DatastoreEntityMapper
from stratabench.layers.mappers.ndb_toolkit import generate


def test_steps_compose_to_decode_and_encode() -> None:
    dataset = generate("mixed", 10, "model")
    mapper = DatastoreEntityMapper(dataset)
    message = mapper.message_class.FromString(dataset.blob(4))
    entity = mapper.from_message(message)
    assert dict(entity) == dict(mapper.decode_many([dataset.blob(4)])[0])
    assert entity.exclude_from_indexes == {name for name, indexed in dataset.fingerprint.items() if not indexed}
    assert mapper.to_message(entity)._pb == message


def test_values_carry_the_key_path() -> None:
    dataset = generate("text", 10, "expando")
    mapper = DatastoreEntityMapper(dataset)
    path, values = mapper.values(mapper.decode_many([dataset.blob(9)])[0])
    assert path == ((dataset.kind, 9),) and values == dataset.values(9)
