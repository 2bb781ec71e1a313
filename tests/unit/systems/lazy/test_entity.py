"""The lazy entity against the installed ndb, and its own contract (docs/studies/entities.md §6, §7)."""

from __future__ import annotations

import datetime
import itertools
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from stratabench.datasets import entities as E
from stratabench.errors import DataError
from stratabench.layers.mappers.ndb_toolkit import generate, ndb_class, ndb_context
from stratabench.systems.lazy import (
    BlobProperty,
    DateTimeProperty,
    FloatProperty,
    IntegerProperty,
    Key,
    LazyEntity,
    StringProperty,
    TextProperty,
)
from stratabench.systems.lazy import _identity, _values
from stratabench.systems.lazy import entity as entity_module
from stratabench.systems.lazy.messages import EntityMessage
from stratabench.layers.mappers.lazy_entity import lazy_class

COMBOS = list(itertools.product(E.SCHEMAS, E.WIDTHS, E.FLAVOURS))


def ndb_entities(dataset: E.EntitiesDataset) -> list[Any]:
    """Every entity of a dataset decoded by ndb's own converter (the reference)."""
    from google.cloud.datastore_v1.types import entity as entity_pb2
    from google.cloud.ndb import model

    ndb_class(dataset.schema, dataset.n_props, dataset.flavour)
    with ndb_context().use():
        return [model._entity_from_protobuf(entity_pb2.Entity.deserialize(blob)) for blob in dataset.blobs]


def same_type(ours: Any, theirs: Any) -> bool:
    """ndb's type rule: exact types, except ndb's datetime subclass (proto-plus's
    DatetimeWithNanoseconds), for which ours is a plain datetime of the same awareness."""
    if isinstance(theirs, datetime.datetime):
        return type(ours) is datetime.datetime and (ours.tzinfo is None) == (theirs.tzinfo is None)
    if isinstance(theirs, list):
        return type(ours) is list and len(ours) == len(theirs) and all(map(same_type, ours, theirs))
    return type(ours) is type(theirs)


def differences(dataset: E.EntitiesDataset, entities: list[Any], references: list[Any]) -> Iterator[str]:
    """Every (entity, property) whose value or type differs from ndb's."""
    with ndb_context().use():
        for ours, theirs in zip(entities, references):
            if ours.key != theirs.key or hash(ours.key) != hash(theirs.key):
                yield f"key {ours.key!r} != {theirs.key!r}"
            for name in dataset.property_names:
                mine, reference = getattr(ours, name), getattr(theirs, name)
                if mine != reference or not same_type(mine, reference):
                    yield f"{theirs.key!r}.{name}: {mine!r} ({type(mine).__name__}) != {reference!r} ({type(reference).__name__})"


@pytest.mark.parametrize(("schema", "n_props", "flavour"), COMBOS)
def test_every_property_of_every_entity_reads_as_ndb_reads_it(schema: str, n_props: int, flavour: str) -> None:
    dataset = generate(schema, n_props, flavour)
    entities = lazy_class(dataset).from_bytes_many(dataset.blobs)
    assert list(differences(dataset, entities, ndb_entities(dataset))) == []


@pytest.mark.parametrize(("schema", "n_props", "flavour"), COMBOS)
def test_materialize_reads_as_ndb_reads(schema: str, n_props: int, flavour: str) -> None:
    dataset = generate(schema, n_props, flavour)
    entities = lazy_class(dataset).from_bytes_many(dataset.blobs)
    for entity, reference in zip(entities, ndb_entities(dataset)):
        with ndb_context().use():
            expected = reference.to_dict()
        values = entity.materialize()
        assert values == expected
        assert all(same_type(values[name], expected[name]) for name in expected)
        # Later reads are the same objects, now plain attribute reads.
        assert all(getattr(entity, name) is values[name] for name in values)


def _break_declared_datetimes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(DateTimeProperty._table, "timestamp_value", _values._timestamp_aware)


def _break_dynamic_datetimes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_values._GENERIC, "timestamp_value", _values._timestamp_naive)


def _break_integers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(IntegerProperty._table, "integer_value", lambda value: float(value.integer_value))
    for cls in (lazy_class(generate("mixed", 10, f)) for f in ("model", "expando")):
        monkeypatch.setattr(cls._lz_properties["prop_c"], "fast", None)


def _break_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    for flavour in E.FLAVOURS:
        cls = lazy_class(generate("mixed", 10, flavour))
        prop = cls._lz_properties.get("prop_h")
        table = prop.table if prop is not None else _values._GENERIC
        array = table["array_value"]
        monkeypatch.setitem(table, "array_value", lambda value, array=array: tuple(array(value)))


def _break_text_from_blobs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_values._GENERIC, "string_value", lambda value: value.string_value.encode())
    monkeypatch.setattr(TextProperty, "_fast_field", None)
    for flavour in E.FLAVOURS:
        cls = lazy_class(generate("mixed", 10, flavour))
        for prop in cls._lz_properties.values():
            if isinstance(prop, TextProperty):
                monkeypatch.setattr(prop, "fast", None)
                monkeypatch.setattr(prop, "table", _values._GENERIC)
        for name in list(cls._lz_learned):
            monkeypatch.delitem(cls._lz_learned, name)
            monkeypatch.delattr(cls, name, raising=False)


@pytest.mark.parametrize(
    ("breakage", "flavours"),
    [
        (_break_declared_datetimes, ("model", "expando")),
        (_break_dynamic_datetimes, ("dynamic",)),
        (_break_integers, ("model", "expando")),
        (_break_lists, E.FLAVOURS),
        (_break_text_from_blobs, E.FLAVOURS),
    ],
)
def test_the_equality_check_catches_a_broken_type_rule(
    monkeypatch: pytest.MonkeyPatch, breakage: Any, flavours: tuple[str, ...]
) -> None:
    datasets = [generate("mixed", 10, flavour) for flavour in flavours]
    references = [ndb_entities(dataset) for dataset in datasets]
    breakage(monkeypatch)
    for dataset, reference in zip(datasets, references):
        found = list(differences(dataset, lazy_class(dataset).from_bytes_many(dataset.blobs), reference))
        assert found, f"a broken rule went unnoticed on {dataset.name}"


def test_first_read_is_cached_and_returns_the_same_object() -> None:
    dataset = generate("mixed", 10, "model")
    entity = lazy_class(dataset).from_bytes(dataset.blob(1))
    assert entity.__dict__ == {}
    first = entity.prop_h
    assert entity.__dict__ == {"prop_h": first}
    assert entity.prop_h is first
    assert "prop_a" not in entity.__dict__


def test_declared_but_absent_properties_read_as_ndb_defaults() -> None:
    class Sparse(LazyEntity, kind="Sparse"):
        name = StringProperty()
        tags = IntegerProperty(repeated=True)
        when = DateTimeProperty()

    blob = Sparse.encode(Key(("Sparse", 1)), {"name": "x"})
    entity = Sparse.from_bytes(blob)
    assert entity.tags == [] and entity.when is None and entity.name == "x"
    assert Sparse.from_bytes(blob).materialize() == {"name": "x", "tags": [], "when": None}


def test_unknown_names_raise_attribute_error() -> None:
    for flavour in E.FLAVOURS:
        dataset = generate("text", 10, flavour)
        entity = lazy_class(dataset).from_bytes(dataset.blob(1))
        with pytest.raises(AttributeError, match="prop_zz"):
            entity.prop_zz  # noqa: B018
    model = generate("text", 10, "model")
    message = EntityMessage.FromString(model.blob(1))
    message.properties["extra"].string_value = "undeclared"
    entity = lazy_class(model).from_bytes(message.SerializeToString())
    with pytest.raises(AttributeError):
        entity.extra  # noqa: B018
    assert "extra" not in entity.materialize()


def test_dynamic_classes_learn_descriptors_but_stay_absent_where_not_stored() -> None:
    Dyn = LazyEntity.define("Learner", {}, dynamic=True)
    one = Dyn.from_bytes(Dyn.encode(Key(("Learner", 1)), {"a": 1, "b": "x"}))
    two = Dyn.from_bytes(Dyn.encode(Key(("Learner", 2)), {"b": "y"}))
    assert one.a == 1 and one.b == "x"
    assert "a" in vars(Dyn)
    with pytest.raises(AttributeError, match="'a'"):
        two.a  # noqa: B018
    assert two.b == "y"


@pytest.mark.parametrize(("schema", "n_props", "flavour"), COMBOS)
def test_keys_equal_ndbs(schema: str, n_props: int, flavour: str) -> None:
    from google.cloud import ndb

    dataset = generate(schema, n_props, flavour)
    entity = lazy_class(dataset).from_bytes(dataset.blob(7))
    with ndb_context().use():
        theirs = ndb.Key(dataset.kind, 7)
        other = ndb.Key(dataset.kind, 8)
        assert entity.key == theirs and theirs == entity.key
        assert entity.key != other
        assert hash(entity.key) == hash(theirs)
        assert repr(entity.key) == repr(theirs) == f"Key('{dataset.kind}', 7)"
    assert entity.key.project() == E.PROJECT and entity.key.namespace() is None


def test_key_round_trip_and_parts() -> None:
    key = Key(("Parent", "p"), ("Child", 3), project="demo", namespace="ns")
    assert Key.from_message(key.to_message()) == key
    assert key.parent() == Key(("Parent", "p"), project="demo", namespace="ns")
    assert key.flat() == ("Parent", "p", "Child", 3) and key.kind() == "Child" and key.id() == 3
    assert key != Key(("Parent", "p"), ("Child", 3), project="demo")
    assert key != "not a key"


# --- failures at get time -------------------------------------------------------------------------


def test_corrupt_bytes_fail_at_decode_naming_the_key() -> None:
    dataset = generate("text", 10, "model")
    cls = lazy_class(dataset)
    corrupt = dataset.blob(1)[:-3] + b"\xff\xff\xff"
    with pytest.raises(DataError, match=r"for key b'wanted'.* do not parse.*corrupt or truncated"):
        cls.from_bytes_many([dataset.blob(2), corrupt], keys=[b"other", b"wanted"])
    with pytest.raises(DataError):
        cls.from_bytes(dataset.blob(1)[:7])


def test_empty_bytes_and_wrong_kinds_fail_the_identity_check() -> None:
    dataset = generate("text", 10, "model")
    cls = lazy_class(dataset)
    with pytest.raises(DataError, match=r"key 7 hold no key .*expected kind TextModel10"):
        cls.from_bytes(b"", key=7)
    other = generate("text", 10, "expando")
    with pytest.raises(DataError, match="hold kind 'TextExpando10', expected 'TextModel10'"):
        cls.from_bytes(other.blob(1))
    with pytest.raises(DataError, match="hold no key"):
        cls.from_message(EntityMessage())


def _entity_bytes(key: Key, **values: str) -> bytes:
    """An entity of any kind, written as serializers write it (key first)."""
    message = EntityMessage()
    message.key.CopyFrom(key.to_message())
    for name, value in values.items():
        message.properties[name].string_value = value
    return bytes(message.SerializeToString())


def test_the_identity_check_learns_key_layouts_and_still_rejects_other_kinds() -> None:
    Pet = LazyEntity.define("Pet", {"name": StringProperty()})
    good = [_entity_bytes(Key(("Pet", ident), project="demo"), name=f"p{ident}") for ident in (1, 2, 3)]
    assert [pet.name for pet in Pet.from_bytes_many(good)] == ["p1", "p2", "p3"]
    assert len(Pet._lz_heads) == 1  # one layout: this project, root keys, one-byte ids
    assert [pet.name for pet in Pet.from_bytes_many(good[::-1])] == ["p3", "p2", "p1"]
    keyless = EntityMessage()
    keyless.properties["name"].string_value = "x"
    rejected = [
        ("hold kind 'Pot', expected 'Pet'", _entity_bytes(Key(("Pot", 4), project="demo"))),  # same lengths
        ("hold kind 'Toy', expected 'Pet'", _entity_bytes(Key(("Pet", 1), ("Toy", 5), project="demo"))),
        ("hold no key", b""),
        ("hold no key", keyless.SerializeToString()),
    ]
    for message, bad in rejected:
        EntityMessage.FromString(bad)  # each one parses: only the identity check can catch it
        for batch in ([*good, bad], [bad, *good]):
            with pytest.raises(DataError, match=f"key 'wanted' {message}"):
                Pet.from_bytes_many(batch, keys=["wanted" if blob is bad else "fine" for blob in batch])
    # Other layouts of the right kind pass, and are learned.
    others = [
        _entity_bytes(Key(("Pet", 1), ("Pet", 2), project="demo"), name="child"),
        _entity_bytes(Key(("Pet", 300), project="demo"), name="two-byte id"),
        _entity_bytes(Key(("Pet", "rex"), project="other", namespace="ns"), name="named"),
    ]
    assert [pet.name for pet in Pet.from_bytes_many([*good, *others])][3:] == ["child", "two-byte id", "named"]
    assert len(Pet._lz_heads) == 4


def test_keys_written_otherwise_are_checked_on_the_message() -> None:
    Pet = LazyEntity.define("Pet", {"name": StringProperty()})
    key_last = _entity_bytes(Key(("Pet", 1)), name="x")
    parsed = EntityMessage.FromString(key_last)
    properties, key = EntityMessage(), EntityMessage()
    properties.properties.MergeFrom(parsed.properties)
    key.key.CopyFrom(parsed.key)
    blob = properties.SerializeToString() + key.SerializeToString()  # parses as one entity
    assert Pet.from_bytes(blob).name == "x" and Pet.from_bytes(blob).key == Key(("Pet", 1))
    assert _identity._key_head(blob, EntityMessage.FromString(blob).key) is None
    assert Pet._lz_heads == ()
    wrong = properties.SerializeToString() + _entity_bytes(Key(("Pot", 1)))
    with pytest.raises(DataError, match="hold kind 'Pot'"):
        Pet.from_bytes(wrong)


def test_a_class_remembers_a_bounded_number_of_key_layouts() -> None:
    Pet = LazyEntity.define("Pet", {"name": StringProperty()})
    named = [_entity_bytes(Key(("Pet", "n" * length)), name=str(length)) for length in range(1, 40)]
    assert [pet.name for pet in Pet.from_bytes_many(named)] == [str(length) for length in range(1, 40)]
    assert len(Pet._lz_heads) == entity_module._MAX_HEADS
    with pytest.raises(DataError, match="hold kind 'Pot'"):
        Pet.from_bytes_many([*named, _entity_bytes(Key(("Pot", "n" * 39)))])


def test_bytes_like_blobs_are_read_and_returned_as_given() -> None:
    dataset = generate("mixed", 10, "model")
    cls = lazy_class(dataset)
    blob = dataset.blob(1)
    for given in (bytearray(blob), memoryview(blob)):
        for batch in ([given], [blob, given], [given, blob]):
            entities = cls.from_bytes_many(batch)
            assert all(entity.prop_a == dataset.values(1)["prop_a"] for entity in entities)
            assert all(entity.to_bytes() is stored for entity, stored in zip(entities, batch))


def test_missing_entities_stay_none() -> None:
    dataset = generate("text", 10, "model")
    result = lazy_class(dataset).from_bytes_many([None, dataset.blob(1), None])
    assert result[0] is None and result[2] is None and result[1].prop_a


def test_deferred_parse_fails_at_first_use() -> None:
    dataset = generate("text", 10, "model")
    cls = lazy_class(dataset)
    good, bad = cls.from_bytes_many([dataset.blob(1), b"\xff\xff"], keys=["k1", "k2"], defer=True)
    assert good.prop_a == dataset.values(1)["prop_a"]
    assert good.key == Key((dataset.kind, 1), project=E.PROJECT)
    with pytest.raises(DataError, match="key 'k2'"):
        bad.prop_a  # noqa: B018


# --- writing --------------------------------------------------------------------------------------


@pytest.mark.parametrize("flavour", E.FLAVOURS)
def test_an_unmodified_entity_returns_its_stored_bytes(flavour: str) -> None:
    dataset = generate("mixed", 10, flavour)
    entity = lazy_class(dataset).from_bytes(dataset.blob(1))
    entity.materialize()
    assert entity.to_bytes() is dataset.blob(1)


def _content(blob: bytes) -> tuple[Any, dict[str, bool]]:
    message = EntityMessage.FromString(blob)
    return E.message_values(message), E.flags_of_message(message)


@pytest.mark.parametrize("flavour", E.FLAVOURS)
def test_a_modified_entity_changes_only_what_was_changed(flavour: str) -> None:
    dataset = generate("mixed", 10, flavour)
    entity = lazy_class(dataset).from_bytes(dataset.blob(1))
    entity.prop_a = "changed"
    entity.prop_c = 5
    (path, values), flags = _content(entity.to_bytes())
    (_, before), before_flags = _content(dataset.blob(1))
    assert values == {**before, "prop_a": "changed", "prop_c": 5}
    assert flags == before_flags == dict(dataset.fingerprint)
    assert entity.to_bytes() is entity.to_bytes()  # clean again after writing


def test_a_list_changed_in_place_is_written() -> None:
    dataset = generate("mixed", 10, "model")
    entity = lazy_class(dataset).from_bytes(dataset.blob(1))
    entity.prop_h.append(9)
    (_, values), _ = _content(entity.to_bytes())
    assert values["prop_h"] == [*dataset.values(1)["prop_h"], 9]


def test_deleting_a_property() -> None:
    dataset = generate("mixed", 10, "model")
    entity = lazy_class(dataset).from_bytes(dataset.blob(1))
    del entity.prop_a
    assert entity.prop_a is None
    (_, values), _ = _content(entity.to_bytes())
    assert "prop_a" not in values and len(values) == 9


def test_assignments_follow_the_read_type_rules() -> None:
    dataset = generate("mixed", 10, "model")
    entity = lazy_class(dataset).from_bytes(dataset.blob(1))
    entity.prop_d = 3  # FloatProperty: an int becomes a float, as ndb does
    assert type(entity.prop_d) is float
    entity.prop_a = b"bytes"  # TextProperty: UTF-8 bytes become str
    assert entity.prop_a == "bytes"
    entity.prop_h = (1, 2)
    assert entity.prop_h == [1, 2]
    with pytest.raises(ValueError, match="naive"):
        entity.prop_f = datetime.datetime.now(datetime.timezone.utc)
    with pytest.raises(TypeError, match="expects int"):
        entity.prop_c = "x"
    with pytest.raises(ValueError, match="64-bit"):
        entity.prop_c = 2**63
    with pytest.raises(AttributeError, match="no property 'nope'"):
        entity.nope = 1
    with pytest.raises(AttributeError):
        entity.key = None
    dynamic = lazy_class(generate("mixed", 10, "dynamic")).from_bytes(generate("mixed", 10, "dynamic").blob(1))
    dynamic.when = datetime.datetime(2020, 1, 1)  # dynamic: aware UTC, as ndb's Expando reads it back
    assert dynamic.when.tzinfo is datetime.timezone.utc
    dynamic.new_text = "x" * 2000
    (_, values), flags = _content(dynamic.to_bytes())
    assert values["when"] == datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
    assert flags["new_text"] is False and flags["prop_a"] is False and flags["prop_b"] is True


@pytest.mark.parametrize(("schema", "n_props", "flavour"), COMBOS)
def test_schema_driven_encoder_reproduces_the_dataset(schema: str, n_props: int, flavour: str) -> None:
    dataset = generate(schema, n_props, flavour)
    cls = lazy_class(dataset)
    if flavour == "dynamic":  # nothing declared: flags come from ndb's Expando rules, values must still match
        blob = cls.encode(Key((dataset.kind, 5), project=E.PROJECT), dataset.values(5))
        assert _content(blob)[0] == _content(dataset.blob(5))[0]
        return
    blob = cls.encode(Key((dataset.kind, 5), project=E.PROJECT), dataset.values(5))
    assert _content(blob) == _content(dataset.blob(5))


def test_new_instances_encode_like_the_class_encoder() -> None:
    class Person(LazyEntity):
        name = StringProperty()
        photo = BlobProperty()
        score = FloatProperty()

    key = Key(("Person", 1), project="demo")
    built = Person(key, name="Ada", photo=b"\x00", score=1)
    assert _content(built.to_bytes()) == _content(Person.encode(key, {"name": "Ada", "photo": b"\x00", "score": 1.0}))
    with pytest.raises(ValueError, match="kind 'Person'"):
        Person(Key(("Other", 1)))


def test_reserved_names_cannot_be_properties() -> None:
    with pytest.raises(TypeError, match="used by LazyEntity itself"):
        LazyEntity.define("Bad", {"materialize": TextProperty()})


def test_runs_without_ndb_or_the_datastore_library() -> None:
    dataset = generate("mixed", 10, "expando")
    code = f"""
import sys
from stratabench.layers.mappers.lazy_entity import LazyEntityMapper, lazy_class
from stratabench.systems.lazy import LazyEntity, TextProperty
cls = LazyEntity.define("MixedExpando10", {{"prop_a": TextProperty()}}, dynamic=True)
entity = cls.from_bytes({dataset.blob(1)!r})
values = entity.materialize()
assert values["prop_a"] and len(values) == 10, values
bad = sorted(m for m in sys.modules if m.startswith(("google.cloud.ndb", "google.cloud.datastore", "proto", "grpc")))
assert not bad, bad
"""
    subprocess.run([sys.executable, "-c", code], check=True)
