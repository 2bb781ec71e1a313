"""The ``entities`` dataset: wide Datastore entities, stored as ndb writes them.

One dataset per (schema, width, flavour, seed), as in docs/studies/entities.md §3:
100 entities of 10 or 100 properties named ``prop_a``, ``prop_b``, ... (the
property index in base 26, least significant letter first, as the 2016
study named them), each holding 20 random lowercase letters (``text``
schema) or a cycle of eight property types (``mixed``). The three flavours
(``model``, ``expando``, ``dynamic``) hold identical property data under
different kinds; only the ndb class that reads them differs.

The stored bytes of each entity are what ndb's own encoder writes for it (a
serialized Datastore v1 ``Entity``). ndb is modelled by the mapper layer,
a floor above this one, so :func:`generate` takes the encoder (an
:class:`Encoder`); :func:`stratabench.layers.mappers.ndb_toolkit.generate`
hands it ndb's and is what the study and the tests call. Encoding is slow
enough to matter (importing ndb and its encoder take about a second), so
each dataset's bytes are built once and kept in the on-disk dataset cache
(:mod:`stratabench.datasets.cache`) for the run's worker processes, and in
memory per process.

The canonical hash covers the values only: one compact JSON line per entity
(key path and every property as ``[name, type, canonical value]``), entities
in key order. Index flags are kept apart as the kind's *fingerprint*
(property name → indexed), against which write paths are checked.

What it cannot do: keys are integer ids in the default namespace of project
``stratabench``; no structured, key, geo-point or null-valued properties are
generated (the reference decoder still canonicalises them).
"""

from __future__ import annotations

import datetime
import functools
import json
import random
import string
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from stratabench.datasets.cache import cached
from stratabench.datasets.canonical import sha1_hex
from stratabench.errors import DataError, UsageError

__all__ = [
    "DEFAULT_SEED",
    "ENTITY_COUNT",
    "FLAVOURS",
    "GET_COUNT",
    "GLOBAL_CACHE_PREFIX",
    "MIXED_TYPES",
    "PROJECT",
    "SCHEMAS",
    "WIDTHS",
    "Encoder",
    "EntitiesDataset",
    "PropertySpec",
    "canonical_hash",
    "canonical_line",
    "canonical_value",
    "entity_values",
    "flags_of_message",
    "generate",
    "global_cache_key",
    "kind_name",
    "message_values",
    "property_name",
    "property_specs",
    "reference_value",
]

Schema = Literal["text", "mixed"]
Flavour = Literal["model", "expando", "dynamic"]
PropertyType = Literal["text", "string", "integer", "float", "boolean", "datetime", "blob", "integers"]

SCHEMAS: tuple[Schema, ...] = ("text", "mixed")
WIDTHS: tuple[int, ...] = (10, 100)
FLAVOURS: tuple[Flavour, ...] = ("model", "expando", "dynamic")
#: The Google Cloud project every key belongs to; ndb's client must use it too.
PROJECT = "stratabench"
#: Entities per kind, as in the original study.
ENTITY_COUNT = 100
#: Entities fetched by every get cell.
GET_COUNT = 20
#: The dataset seed when the run gives none.
DEFAULT_SEED = 2016
#: ndb's global-cache key tag (``google.cloud.ndb._cache._PREFIX``), before the serialized v1 Key.
GLOBAL_CACHE_PREFIX = b"NDB30"

#: Property types of the ``mixed`` schema, by property index modulo 8 (docs/studies/entities.md §3).
MIXED_TYPES: tuple[PropertyType, ...] = (
    "text",
    "string",
    "integer",
    "float",
    "boolean",
    "datetime",
    "blob",
    "integers",
)
# ndb's defaults: TextProperty and BlobProperty are never indexed, the rest are.
_INDEXED: dict[PropertyType, bool] = {
    "text": False,
    "string": True,
    "integer": True,
    "float": True,
    "boolean": True,
    "datetime": True,
    "blob": False,
    "integers": True,
}
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
# Timestamps are drawn from [1970, 2100): inside every library's range.
_TIMESTAMP_SPAN_US = 4_102_444_800 * 1_000_000


@dataclass(frozen=True)
class PropertySpec:
    """One declared property of a kind.

    Attributes
    ----------
    name
        The stored name (``prop_a``).
    type
        ``text``, ``string``, ``integer``, ``float``, ``boolean``,
        ``datetime``, ``blob``, or ``integers`` (a repeated integer).
    indexed
        Whether ndb writes it as indexed (the fingerprint's value).
    """

    name: str
    type: PropertyType
    indexed: bool

    @property
    def repeated(self) -> bool:
        """Whether the property holds a list."""
        return self.type == "integers"


def property_name(index: int) -> str:
    """The original study's name for property ``index``: ``prop_`` + base 26, least significant first.

    >>> [property_name(i) for i in (0, 25, 26, 27, 99)]
    ['prop_a', 'prop_z', 'prop_ab', 'prop_bb', 'prop_vd']
    """
    if index < 0:
        raise UsageError(f"property index must be 0 or more, not {index}")
    letters = []
    while True:
        index, digit = divmod(index, 26)
        letters.append(string.ascii_lowercase[digit])
        if index == 0:
            return "prop_" + "".join(letters)


def kind_name(schema: str, n_props: int, flavour: str) -> str:
    """The kind of a dataset: schema, flavour and width, ``TextModel100``, ``MixedDynamic10``."""
    _check(schema, n_props, flavour)
    return f"{schema.capitalize()}{flavour.capitalize()}{n_props}"


def _check(schema: str, n_props: int, flavour: str) -> None:
    if schema not in SCHEMAS:
        raise UsageError(f"unknown entities schema {schema!r}; known: {', '.join(SCHEMAS)}")
    if flavour not in FLAVOURS:
        raise UsageError(f"unknown entities flavour {flavour!r}; known: {', '.join(FLAVOURS)}")
    if n_props < 1:
        raise UsageError(f"entities need at least one property, not {n_props}")


def property_specs(schema: str, n_props: int) -> tuple[PropertySpec, ...]:
    """The declared properties of a schema at a width, in index order."""
    _check(schema, n_props, "model")
    specs = []
    for index in range(n_props):
        kind: PropertyType = "text" if schema == "text" else MIXED_TYPES[index % len(MIXED_TYPES)]
        specs.append(PropertySpec(property_name(index), kind, _INDEXED[kind]))
    return tuple(specs)


def _letters(rng: random.Random) -> str:
    return "".join(rng.choices(string.ascii_lowercase, k=20))


def _int64(rng: random.Random) -> int:
    return rng.getrandbits(64) - (1 << 63)


_GENERATORS: dict[PropertyType, Callable[[random.Random], Any]] = {
    "text": _letters,
    "string": _letters,
    "integer": _int64,
    "float": lambda rng: rng.uniform(-1e9, 1e9),
    "boolean": lambda rng: rng.getrandbits(1) == 1,
    "datetime": lambda rng: _EPOCH + datetime.timedelta(microseconds=rng.randrange(_TIMESTAMP_SPAN_US)),
    "blob": lambda rng: rng.randbytes(16),
    "integers": lambda rng: [_int64(rng) for _ in range(3)],
}


@functools.lru_cache(maxsize=None)
def _values(schema: str, n_props: int, seed: int) -> tuple[tuple[tuple[str, Any], ...], ...]:
    """Every entity's property values, shared by the three flavours (immutable)."""
    # A string seed hashes the same on every machine and Python 3 version.
    rng = random.Random(f"entities/{schema}/{n_props}/{seed}")
    specs = property_specs(schema, n_props)
    return tuple(
        tuple((spec.name, _freeze(_GENERATORS[spec.type](rng))) for spec in specs) for _ in range(ENTITY_COUNT)
    )


def entity_values(schema: str, n_props: int, seed: int) -> list[dict[str, Any]]:
    """Every entity's Python values, ids 1, 2, ... in order (fresh lists; naive UTC datetimes)."""
    _check(schema, n_props, "model")
    return [{name: _thaw(value) for name, value in row} for row in _values(schema, n_props, seed)]


def _freeze(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _thaw(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


# --- canonical form ------------------------------------------------------------------------------


def canonical_value(value: Any) -> tuple[str, Any]:
    """The (type, canonical value) of one Python property value (docs/studies/entities.md §3).

    Integers become decimal text, floats their exact hexadecimal form, bytes
    lowercase hex, timestamps integer microseconds since the epoch in UTC (a
    naive datetime counts as UTC), lists ordered lists of (type, value)
    pairs, ``None`` null.

    Raises
    ------
    DataError
        For a value of a type no Datastore property holds.
    """
    if value is None:
        return "null", None
    kind = type(value)
    if kind is str:
        return "string", value
    if kind is bool:
        return "boolean", value
    if kind is int:
        return "integer", str(value)
    if kind is float:
        return "double", value.hex()
    if kind is bytes:
        return "blob", value.hex()
    if isinstance(value, datetime.datetime):
        epoch = _EPOCH if value.tzinfo is None else _EPOCH_UTC
        return "timestamp", (value - epoch) // datetime.timedelta(microseconds=1)
    if kind is list:
        return "array", [list(canonical_value(item)) for item in value]
    # Subclasses (a str enum, an int subclass) after the exact types, which are the fast common case.
    if isinstance(value, bool):
        return canonical_value(bool(value))
    if isinstance(value, int):
        return canonical_value(int(value))
    if isinstance(value, float):
        return canonical_value(float(value))
    if isinstance(value, str):
        return canonical_value(str(value))
    if isinstance(value, bytes):
        return canonical_value(bytes(value))
    if isinstance(value, list):
        return canonical_value(list(value))
    raise DataError(f"cannot canonicalise a {kind.__name__} property value {value!r}")


def canonical_line(path: Sequence[tuple[str, int | str]], properties: Mapping[str, Any]) -> str:
    """One entity's canonical line: compact JSON, sorted keys, no newline.

    Parameters
    ----------
    path
        The key path as (kind, id or name) pairs.
    properties
        Every stored property's Python value by name.
    """
    props = [[name, *canonical_value(properties[name])] for name in sorted(properties)]
    body = {"key": [[kind, ident] for kind, ident in path], "properties": props}
    return json.dumps(body, sort_keys=True, separators=(",", ":"))


def canonical_hash(lines: Iterable[tuple[tuple[tuple[str, int | str], ...], str]]) -> str:
    """SHA-1 over canonical lines, entities in key order.

    Parameters
    ----------
    lines
        (key path, canonical line) pairs, in any order; they are sorted by
        key path here so that callers may hash in get order.
    """
    ordered = sorted(lines, key=lambda item: item[0])
    return sha1_hex("".join(line + "\n" for _, line in ordered).encode())


def message_values(message: Any) -> tuple[tuple[tuple[str, int | str], ...], dict[str, Any]]:
    """The reference decoder: key path and Python values of a raw v1 ``Entity`` message.

    Independent of ndb, the datastore library and the lazy entity, so it can
    judge all three. Timestamps come back timezone-aware (UTC), which hashes
    the same as ndb's naive UTC datetimes. Works on any message class with
    the v1 field names (the project's own or ``datastore_v1``'s raw ``_pb``).
    """
    path = tuple((element.kind, _path_id(element)) for element in message.key.path)
    return path, {name: reference_value(value) for name, value in message.properties.items()}


def _path_id(element: Any) -> int | str:
    which = element.WhichOneof("id_type")
    if which == "id":
        return int(element.id)
    if which == "name":
        return str(element.name)
    raise DataError(f"key path element of kind {element.kind!r} has no id or name (an incomplete key)")


def reference_value(value: Any) -> Any:
    """The reference decoder's Python value of one v1 ``Value`` message (aware UTC timestamps)."""
    which = value.WhichOneof("value_type")
    if which == "string_value":
        return value.string_value
    if which == "integer_value":
        return value.integer_value
    if which == "double_value":
        return value.double_value
    if which == "boolean_value":
        return value.boolean_value
    if which == "blob_value":
        return value.blob_value
    if which == "timestamp_value":
        ts = value.timestamp_value
        return _EPOCH_UTC + datetime.timedelta(seconds=ts.seconds, microseconds=ts.nanos // 1000)
    if which == "array_value":
        return [reference_value(item) for item in value.array_value.values]
    if which == "null_value" or which is None:
        return None
    raise DataError(f"the canonical form has no rule for a {which} property value")


def flags_of_message(message: Any) -> dict[str, bool]:
    """Property name → indexed, as stored in a raw v1 ``Entity`` message.

    An array is indexed unless its elements are excluded (v1 puts the flag on
    each element, never on the array).
    """
    flags = {}
    for name, value in message.properties.items():
        if value.WhichOneof("value_type") == "array_value":
            items = value.array_value.values
            flags[name] = not (items and all(item.exclude_from_indexes for item in items))
        else:
            flags[name] = not value.exclude_from_indexes
    return flags


# --- keys ----------------------------------------------------------------------------------------


def _key_bytes(kind: str, ident: int) -> bytes:
    from stratabench.systems.lazy.messages import KeyMessage

    key = KeyMessage()
    key.partition_id.project_id = PROJECT
    key.path.add(kind=kind, id=ident)
    return bytes(key.SerializeToString())


def global_cache_key(kind: str, ident: int) -> bytes:
    """ndb's global-cache key of ``Key(kind, ident)`` in project ``stratabench``.

    The store key of every entity, so the direct paths and ndb's own read
    path through its global cache read the same record (docs/studies/entities.md §4.1).
    """
    return GLOBAL_CACHE_PREFIX + _key_bytes(kind, ident)


# --- the dataset ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class EntitiesDataset:
    """One generated dataset: 100 entities of one kind and their stored bytes.

    Attributes
    ----------
    schema, n_props, flavour, seed
        What was generated.
    kind
        The entities' kind (``TextModel100``).
    properties
        The declared properties, in index order (the read patterns' "first").
    ids
        Integer ids 1..100, in key order.
    blobs
        Each entity's stored bytes (ndb's encoding), aligned with ``ids``.
    get_ids
        The 20 ids every get cell fetches, in the order they are fetched.
    fingerprint
        Property name → indexed, for the kind.
    hash
        Canonical hash of all 100 entities.
    get_hash
        Canonical hash of the 20 entities of ``get_ids``.
    """

    schema: Schema
    n_props: int
    flavour: Flavour
    seed: int
    kind: str
    properties: tuple[PropertySpec, ...]
    ids: tuple[int, ...]
    blobs: tuple[bytes, ...]
    get_ids: tuple[int, ...]
    fingerprint: Mapping[str, bool]
    hash: str
    get_hash: str

    @property
    def name(self) -> str:
        """Readable identity: ``entities/text/100/model``."""
        return f"entities/{self.schema}/{self.n_props}/{self.flavour}"

    @property
    def property_names(self) -> tuple[str, ...]:
        """Declared property names in index order."""
        return tuple(spec.name for spec in self.properties)

    def values(self, ident: int) -> dict[str, Any]:
        """The Python values entity ``ident`` was built from (fresh lists; naive UTC datetimes)."""
        row = _values(self.schema, self.n_props, self.seed)[ident - 1]
        return {name: _thaw(value) for name, value in row}

    def blob(self, ident: int) -> bytes:
        """Entity ``ident``'s stored bytes."""
        return self.blobs[ident - 1]

    def cache_key(self, ident: int) -> bytes:
        """Entity ``ident``'s store key (ndb's global-cache key)."""
        return global_cache_key(self.kind, ident)

    @property
    def get_keys(self) -> list[bytes]:
        """Store keys of the get set, in fetch order."""
        return [self.cache_key(ident) for ident in self.get_ids]

    @property
    def get_blobs(self) -> list[bytes]:
        """Stored bytes of the get set, in fetch order."""
        return [self.blob(ident) for ident in self.get_ids]

    def line(self, ident: int) -> str:
        """Entity ``ident``'s canonical line."""
        return canonical_line(((self.kind, ident),), self.values(ident))

    def hash_of(self, ids: Iterable[int]) -> str:
        """Canonical hash of the entities ``ids``."""
        return canonical_hash((((self.kind, ident),), self.line(ident)) for ident in ids)


class Encoder(Hashable, Protocol):
    """What writes each entity's stored bytes: the study's is ndb's (``ndb_toolkit.NDB_ENCODER``).

    Hashable, as a dataset is built once per process for each encoder.
    """

    def version(self) -> str:
        """The encoder and its release (``ndb2.7.1``), in the on-disk cache key: bytes another wrote are never read."""
        ...

    def encode(self, schema: str, n_props: int, flavour: str, rows: Sequence[Mapping[str, Any]]) -> list[bytes]:
        """The stored bytes of entities 1, 2, ... of the dataset's kind, from each one's values in ``rows``."""
        ...


def generate(
    schema: str, n_props: int, flavour: str, seed: int = DEFAULT_SEED, *, encoder: Encoder
) -> EntitiesDataset:
    """Build (or return the cached) dataset for these coordinates, its bytes written by ``encoder``.

    A pure function of its arguments: the same bytes on every machine.

    Raises
    ------
    UsageError
        For an unknown schema or flavour.
    UnavailableError
        When the encoder's library is not installed.
    """
    _check(schema, n_props, flavour)
    return _generate(schema, n_props, flavour, seed, encoder)


@functools.lru_cache(maxsize=None)
def _generate(schema: str, n_props: int, flavour: str, seed: int, encoder: Encoder) -> EntitiesDataset:
    kind = kind_name(schema, n_props, flavour)
    specs = property_specs(schema, n_props)
    ids = tuple(range(1, ENTITY_COUNT + 1))
    blobs = tuple(cached(_cache_key(kind, seed, encoder),
                         lambda: encoder.encode(schema, n_props, flavour, entity_values(schema, n_props, seed))))
    get_ids = tuple(random.Random(f"entities/get/{kind}/{seed}").sample(ids, GET_COUNT))
    fingerprint = {spec.name: spec.indexed for spec in specs}
    rows = _values(schema, n_props, seed)
    lines = {ident: canonical_line(((kind, ident),), {n: _thaw(v) for n, v in rows[ident - 1]}) for ident in ids}

    def hash_of(chosen: Iterable[int]) -> str:
        return canonical_hash((((kind, ident),), lines[ident]) for ident in chosen)

    return EntitiesDataset(
        schema=schema,  # type: ignore[arg-type]
        n_props=n_props,
        flavour=flavour,  # type: ignore[arg-type]
        seed=seed,
        kind=kind,
        properties=specs,
        ids=ids,
        blobs=blobs,
        get_ids=get_ids,
        fingerprint=fingerprint,
        hash=hash_of(ids),
        get_hash=hash_of(get_ids),
    )


#: Changes whenever the generator does, so no cached bytes of an older one are read.
_VERSION = 1


def _cache_key(kind: str, seed: int, encoder: Encoder) -> str:
    """The on-disk cache key of a kind's bytes: they depend on the generator and the encoder."""
    return f"entities-v{_VERSION}-{kind}-seed{seed}-{encoder.version()}"
