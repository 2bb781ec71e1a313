"""Every registered mapper, the same contract: decode, read, hash, encode, misses and corrupt bytes."""

from __future__ import annotations

import itertools

import pytest

from stratabench.datasets import entities as E
from stratabench.errors import DataError
from stratabench.layers.mappers import MAPPERS
from stratabench.layers.mappers.base import Mapper, verify_objects
from stratabench.layers.mappers.ndb_toolkit import generate
from tests.availability import unavailable

COMBOS = list(itertools.product(E.SCHEMAS, E.WIDTHS, E.FLAVOURS))


def test_every_mapper_is_covered() -> None:
    assert set(MAPPERS.names) == {"datastore", "lazy", "ndb", "protobuf"}


@pytest.fixture(params=MAPPERS.names)
def mapper_name(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    info = MAPPERS.info(name)
    if not info.availability.ok:
        unavailable(f"mapper {name}: {info.availability.reason}")
    return name


def build(name: str, dataset: E.EntitiesDataset) -> Mapper:
    mapper: Mapper = MAPPERS.get(name)(dataset)
    return mapper


@pytest.mark.parametrize(("schema", "n_props", "flavour"), COMBOS)
def test_decoded_objects_hash_to_the_dataset(mapper_name: str, schema: str, n_props: int, flavour: str) -> None:
    dataset = generate(schema, n_props, flavour)
    mapper = build(mapper_name, dataset)
    objects = mapper.decode_many(dataset.get_blobs)
    mapper.read(objects, dataset.property_names[:10])
    assert verify_objects(mapper, objects, dataset.get_hash).ok


@pytest.mark.parametrize(("schema", "n_props", "flavour"), COMBOS)
def test_encoded_bytes_decode_to_the_dataset(mapper_name: str, schema: str, n_props: int, flavour: str) -> None:
    dataset = generate(schema, n_props, flavour)
    mapper = build(mapper_name, dataset)
    reference = build("protobuf", dataset)
    encoded = [mapper.encode(obj) for obj in mapper.decode_many(dataset.get_blobs)]
    assert verify_objects(reference, reference.decode_many(encoded), dataset.get_hash).ok


def test_a_miss_stays_none(mapper_name: str) -> None:
    dataset = generate("mixed", 10, "model")
    mapper = build(mapper_name, dataset)
    objects = mapper.decode_many([None, dataset.blob(1), None])
    assert objects[0] is None and objects[2] is None and objects[1] is not None
    mapper.read(objects, dataset.property_names)
    assert mapper.canonical_hash(objects) == dataset.hash_of([1])


def test_corrupt_bytes_are_a_data_error(mapper_name: str) -> None:
    """A blob cut short by one byte is corrupt whatever order its fields were serialized in.

    Every top-level field of an Entity (the key, each property's map entry) is
    length-delimited, so the last byte belongs to a field that the cut leaves
    shorter than its length says (or, for an empty one, without its length).
    Overwriting the last bytes instead is not corrupt in every order: when the
    map puts a double last, ``ff ff ff ff`` is a NaN and the message parses.
    """
    dataset = generate("mixed", 10, "model")
    mapper = build(mapper_name, dataset)
    with pytest.raises(DataError, match=f"stored {dataset.kind} bytes .*do not parse as a Datastore v1 Entity"):
        mapper.decode_many([dataset.blob(1)[:-1]])


def test_verify_names_the_first_wrong_property(mapper_name: str) -> None:
    from stratabench.systems.lazy.messages import EntityMessage

    dataset = generate("mixed", 10, "model")
    message = EntityMessage.FromString(dataset.blob(dataset.get_ids[0]))
    message.properties["prop_c"].integer_value += 1
    blobs = [message.SerializeToString(), *dataset.get_blobs[1:]]
    mapper = build(mapper_name, dataset)
    integrity = verify_objects(mapper, mapper.decode_many(blobs), dataset.get_hash)
    assert not integrity.ok
    assert "property 'prop_c'" in (integrity.detail or "")
