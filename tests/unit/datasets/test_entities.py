"""The entities dataset: names, keys, values, ndb's bytes, the canonical form and the fingerprint.

ndb's own side (its classes, that the bytes are its encoding) is tested with
the toolkit, in tests/unit/layers/mappers/test_ndb_toolkit.py.
"""

from __future__ import annotations

import datetime
import itertools

import pytest

from stratabench.datasets import entities as E
from stratabench.errors import DataError, UsageError
from stratabench.layers.mappers.ndb_toolkit import NDB_ENCODER, generate, ndb_context
from stratabench.systems.lazy.messages import EntityMessage

COMBOS = list(itertools.product(E.SCHEMAS, E.WIDTHS, E.FLAVOURS))

# Pinned: a change here changes every stored byte and every result's hash.
HASHES = {
    ("text", 10, "model"): ("015583e4e69d67c258ae95fb070ed33769ebdb6a", "5aab70071c33a6fbc97b2e5b242df6edbb97817c"),
    ("text", 10, "expando"): ("a9cbf554fe43f1e5cc3dbd0fdba2ccfad46161b7", "e3511c7052dbaaf785b1e04713a6b984673918f3"),
    ("text", 10, "dynamic"): ("a3e15af821ad2ad9f3ee854b1c22559252d45c1c", "d9aa5183c960f1f8ff10c03f75763d3f1dbc73c9"),
    ("text", 100, "model"): ("2721fdc310761bc610e216f784a06a44e38f2d17", "b1b90df90071f56d0c3c1e5d3269d18bff2b6350"),
    ("text", 100, "expando"): ("d2840dd79aa8a9ef8a46e6ebfeab6cfdd897dcd5", "025b264a3955324d255eab8eaf4d05f396eb8bf4"),
    ("text", 100, "dynamic"): ("dc33c411849014564e67f02ac8148be5c7db7729", "5e288e534c0edbd361b707fb60893f846564651f"),
    ("mixed", 10, "model"): ("3045496344ffbe47f136292046028ec63b5eec82", "fabaec08509ae067e51d04c8ef1d79fdb0bde890"),
    ("mixed", 10, "expando"): ("b8ac271ef27a9c6fe3dd76f0520ddf813a7b7e0b", "ae2672941f0909ea506a12ea9d74da26d9b6fbcb"),
    ("mixed", 10, "dynamic"): ("a5ae7658437314194e6a87a5f4f75236027ed853", "ce8712d148676d37e5423c2c625cc1bade329210"),
    ("mixed", 100, "model"): ("bd4f91ff589df66d3b5ce25f1b8162289c7b443a", "6b13d374082b58ccd4ff7f20b645d98dedbbdfdf"),
    ("mixed", 100, "expando"): ("01bbdaaeedd2140035883f722d0abd3d58123bab", "10bb2ea5a0030620adc8bd8132f66dad4839d931"),
    ("mixed", 100, "dynamic"): ("1971da2fe5d9d36a0de3025d714179be81fdc991", "6dd87893ec796bde75136dba72a5969efcce8e04"),
}


def test_property_names_follow_the_original_study() -> None:
    names = [E.property_name(i) for i in range(100)]
    assert names[:3] == ["prop_a", "prop_b", "prop_c"]
    assert names[25:28] == ["prop_z", "prop_ab", "prop_bb"]
    assert names[99] == "prop_vd"
    assert len(set(names)) == 100
    with pytest.raises(UsageError):
        E.property_name(-1)


def test_kind_names() -> None:
    assert E.kind_name("text", 100, "model") == "TextModel100"
    assert E.kind_name("mixed", 10, "dynamic") == "MixedDynamic10"
    with pytest.raises(UsageError, match="unknown entities schema"):
        E.kind_name("json", 10, "model")
    with pytest.raises(UsageError, match="unknown entities flavour"):
        E.kind_name("text", 10, "polymodel")


def test_mixed_schema_cycles_through_eight_types_with_ndb_index_flags() -> None:
    specs = E.property_specs("mixed", 10)
    assert [s.type for s in specs] == [*E.MIXED_TYPES, "text", "string"]
    assert [s.indexed for s in specs[:8]] == [False, True, True, True, True, True, False, True]
    assert specs[7].repeated and not specs[6].repeated
    assert all(s.type == "text" and not s.indexed for s in E.property_specs("text", 100))


@pytest.mark.parametrize(("schema", "n_props", "flavour"), COMBOS)
def test_hashes_are_pinned(schema: str, n_props: int, flavour: str) -> None:
    dataset = generate(schema, n_props, flavour)
    assert (dataset.hash, dataset.get_hash) == HASHES[(schema, n_props, flavour)]
    assert dataset.hash_of(dataset.get_ids) == dataset.get_hash


@pytest.mark.parametrize(("schema", "n_props", "flavour"), COMBOS)
def test_reference_decoder_and_fingerprint_agree_with_the_stored_bytes(schema: str, n_props: int, flavour: str) -> None:
    dataset = generate(schema, n_props, flavour)
    lines = []
    for ident, blob in zip(dataset.ids, dataset.blobs):
        message = EntityMessage.FromString(blob)
        path, values = E.message_values(message)
        assert path == ((dataset.kind, ident),)
        assert E.flags_of_message(message) == dict(dataset.fingerprint)
        lines.append((path, E.canonical_line(path, values)))
    assert E.canonical_hash(lines) == dataset.hash


def test_generation_is_a_pure_function_of_its_arguments() -> None:
    first = generate("mixed", 10, "model")
    E._values.cache_clear()
    # Straight from ndb's encoder, past the in-memory and on-disk caches
    # (compared parsed: upb's map order is not stable across processes).
    fresh = NDB_ENCODER.encode("mixed", 10, "model", E.entity_values("mixed", 10, E.DEFAULT_SEED))
    assert [E.message_values(EntityMessage.FromString(b)) for b in fresh] == [
        E.message_values(EntityMessage.FromString(b)) for b in first.blobs]
    E._generate.cache_clear()
    assert generate("mixed", 10, "model").get_ids == first.get_ids
    other_seed = generate("mixed", 10, "model", seed=7)
    assert other_seed.hash != first.hash


def test_get_set_is_twenty_distinct_keys() -> None:
    dataset = generate("text", 10, "model")
    assert len(dataset.get_ids) == E.GET_COUNT == len(set(dataset.get_ids))
    assert set(dataset.get_ids) <= set(dataset.ids)
    assert dataset.get_blobs == [dataset.blob(i) for i in dataset.get_ids]


@pytest.mark.parametrize(
    ("schema", "n_props", "low", "high"),
    [("text", 10, 380, 450), ("text", 100, 3700, 4100), ("mixed", 10, 300, 400), ("mixed", 100, 2800, 3300)],
)
def test_sizes_match_the_spec(schema: str, n_props: int, low: int, high: int) -> None:
    blobs = generate(schema, n_props, "model").blobs
    assert low <= sum(map(len, blobs)) / len(blobs) <= high


@pytest.mark.parametrize(("schema", "n_props"), list(itertools.product(E.SCHEMAS, E.WIDTHS)))
def test_flavours_hold_identical_data_and_flags(schema: str, n_props: int) -> None:
    contents = []
    for flavour in E.FLAVOURS:
        dataset = generate(schema, n_props, flavour)
        message = EntityMessage.FromString(dataset.blob(1))
        contents.append((E.message_values(message)[1], E.flags_of_message(message)))
    assert contents[0] == contents[1] == contents[2]


def test_global_cache_key_is_ndbs() -> None:
    from google.cloud import ndb
    from google.cloud.ndb import _cache

    with ndb_context().use():
        expected = _cache.global_cache_key(ndb.Key("TextModel100", 42)._key)
    assert E.global_cache_key("TextModel100", 42) == expected
    assert expected.startswith(E.GLOBAL_CACHE_PREFIX)


def test_values_are_fresh_copies() -> None:
    dataset = generate("mixed", 10, "model")
    values = dataset.values(3)
    values["prop_h"].append(1)
    assert len(dataset.values(3)["prop_h"]) == 3
    assert isinstance(values["prop_f"], datetime.datetime) and values["prop_f"].tzinfo is None


def test_canonical_values() -> None:
    naive = datetime.datetime(2001, 2, 3, 4, 5, 6, 7)
    aware = naive.replace(tzinfo=datetime.timezone.utc)
    assert E.canonical_value(naive) == E.canonical_value(aware) == ("timestamp", 981173106000007)
    assert E.canonical_value(-(2**63)) == ("integer", "-9223372036854775808")
    assert E.canonical_value(0.1) == ("double", "0x1.999999999999ap-4")
    assert E.canonical_value(True) == ("boolean", True)
    assert E.canonical_value(b"\x00\xff") == ("blob", "00ff")
    assert E.canonical_value("x") == ("string", "x")
    assert E.canonical_value(None) == ("null", None)
    assert E.canonical_value([1, "a"]) == ("array", [["integer", "1"], ["string", "a"]])
    # A float that equals an int is still a double; a bool is never an integer.
    assert E.canonical_value(1.0)[0] == "double" and E.canonical_value(1)[0] == "integer"
    with pytest.raises(DataError, match="cannot canonicalise a dict"):
        E.canonical_value({"a": 1})


def test_canonical_line_is_compact_sorted_json() -> None:
    line = E.canonical_line((("K", 1),), {"b": 2, "a": "x"})
    assert line == '{"key":[["K",1]],"properties":[["a","string","x"],["b","integer","2"]]}'


def test_hash_is_in_key_order_whatever_the_input_order() -> None:
    dataset = generate("text", 10, "model")
    shuffled = list(reversed(dataset.get_ids))
    assert dataset.hash_of(shuffled) == dataset.get_hash
