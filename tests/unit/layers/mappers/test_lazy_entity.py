"""The lazy mapper: one class per kind, flavours, the deferred variant and bulk materialize."""

from __future__ import annotations

import pytest

from stratabench.errors import DataError
from stratabench.layers.mappers.lazy_entity import LazyEntityMapper, lazy_class
from stratabench.layers.mappers.ndb_toolkit import generate


def test_one_class_per_kind_shaped_by_flavour() -> None:
    model = lazy_class(generate("mixed", 10, "model"))
    assert model is lazy_class(generate("mixed", 10, "model"))
    assert model._lz_kind == "MixedModel10" and not model._lz_dynamic and len(model._lz_properties) == 10
    expando = lazy_class(generate("mixed", 10, "expando"))
    assert expando._lz_dynamic and len(expando._lz_properties) == 10
    dynamic = lazy_class(generate("mixed", 10, "dynamic"))
    assert dynamic._lz_dynamic and dynamic._lz_properties == {}


def test_materialize_many_keeps_misses() -> None:
    dataset = generate("text", 100, "model")
    mapper = LazyEntityMapper(dataset)
    values = mapper.materialize(mapper.decode_many([None, dataset.blob(3)]))
    assert values[0] is None and values[1] == dataset.values(3)


def test_deferred_variant_moves_the_failure_to_the_first_read() -> None:
    dataset = generate("text", 10, "model")
    mapper = LazyEntityMapper(dataset, defer=True)
    (entity,) = mapper.decode_many([b"\x0a\xff"], keys=["the key"])
    with pytest.raises(DataError, match="'the key'"):
        mapper.read([entity], ["prop_a"])
    with pytest.raises(DataError):
        LazyEntityMapper(dataset).decode_many([b"\x0a\xff"])


def test_encode_returns_the_stored_bytes_when_nothing_changed() -> None:
    dataset = generate("text", 10, "model")
    mapper = LazyEntityMapper(dataset)
    (entity,) = mapper.decode_many([dataset.blob(1)])
    assert mapper.encode(entity) is dataset.blob(1)
