"""The ndb mapper: ndb's own steps and what its encoder does to dynamic properties."""

from __future__ import annotations

import pytest

from stratabench.datasets import entities as E
from stratabench.layers.mappers.datastore_entity import DatastoreEntityMapper
from stratabench.layers.mappers.ndb_model import NdbModelMapper
from stratabench.layers.mappers.ndb_toolkit import generate
from stratabench.systems.lazy.messages import EntityMessage


@pytest.mark.parametrize(("flavour", "label"), [("model", "ndb.Model"), ("expando", "ndb.Expando"), ("dynamic", "ndb.Expando (dynamic)")])
def test_classes_by_flavour(flavour: str, label: str) -> None:
    mapper = NdbModelMapper(generate("mixed", 10, flavour))
    assert mapper.label == label
    assert type(mapper.decode_many([mapper.dataset.blob(1)])[0]) is mapper.model_class


def test_steps_compose_to_decode_and_encode() -> None:
    dataset = generate("mixed", 10, "model")
    ndb_mapper, ds_mapper = NdbModelMapper(dataset), DatastoreEntityMapper(dataset)
    (entity,) = ds_mapper.decode_many([dataset.blob(6)])
    instance = ndb_mapper.from_datastore(entity)
    assert ndb_mapper.values(instance) == ndb_mapper.values(ndb_mapper.decode_many([dataset.blob(6)])[0])
    again = ndb_mapper.to_datastore(instance)
    # ndb hands the datastore layer naive UTC datetimes; the stored value is the same instant.
    assert again["prop_f"] == entity["prop_f"].replace(tzinfo=None)
    assert {k: v for k, v in again.items() if k != "prop_f"} == {k: v for k, v in entity.items() if k != "prop_f"}
    assert again.exclude_from_indexes == entity.exclude_from_indexes


def _content(blob: bytes) -> object:
    message = EntityMessage.FromString(blob)
    return E.message_values(message), E.flags_of_message(message)


def test_a_built_instance_encodes_to_the_stored_content() -> None:
    # Compared parsed: upb's map order is not stable across processes, and the
    # stored bytes may come from another process (the on-disk dataset cache).
    dataset = generate("text", 10, "model")
    mapper = NdbModelMapper(dataset)
    assert _content(mapper.encode(mapper.build(3))) == _content(dataset.blob(3))


def test_ndb_indexes_dynamic_properties_it_writes_again() -> None:
    # Today's ndb re-saves an Expando's dynamic properties as indexed: the
    # encode cells must report this as "index flags changed", not hide it.
    dataset = generate("mixed", 10, "dynamic")
    mapper = NdbModelMapper(dataset)
    (instance,) = mapper.decode_many([dataset.blob(1)])
    flags = E.flags_of_message(EntityMessage.FromString(mapper.encode(instance)))
    assert flags != dict(dataset.fingerprint)
    assert all(flags.values())
