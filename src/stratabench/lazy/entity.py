"""The lazy entity: stored Datastore v1 entities read like ndb models, converted on first read.

Decoding a wide entity into an ndb model converts every property (and
builds a ``google.cloud.datastore.Entity`` on the way) even when the caller
reads two of them. A :class:`LazyEntity` parses the stored bytes at once, so
corrupt input fails where it is fetched, and converts nothing more: each
property is converted the first time it is read, through a per-class
descriptor, and the result is kept on the instance, so later reads are plain
attribute reads returning the same object.

Values and their Python types are ndb's: declared properties follow their
declared type (naive UTC datetimes, ``str`` for text, lists for repeated
properties, ``None`` or ``[]`` when absent), undeclared properties of a
dynamic class are typed as ndb's ``Expando`` types them (timezone-aware UTC
datetimes). Keys compare equal to ndb's keys.

Writing is faithful: an unmodified entity returns the bytes it was read from,
untouched; a modified one re-encodes its parsed message with only the changed
properties replaced, every other value and index flag kept.

It needs only the ``protobuf`` runtime (see :mod:`stratabench.lazy.messages`);
ndb and google-cloud-datastore are neither imported nor required.

What it cannot do: structured (embedded entity) properties, compressed blob
properties, ``DateTimeProperty(tzinfo=...)`` and ndb's property options
(``required``, ``choices``, validators, defaults other than ``None``/``[]``)
are not supported; a datetime read or written keeps microseconds, not
nanoseconds. Names used by the class itself (``key``, ``message``,
``materialize``, ``to_bytes``, anything starting with ``_lz``) cannot be
property attributes; :meth:`LazyEntity.materialize` still returns such
stored properties of a dynamic class. The kind check compares the bytes'
prefix with key layouts the class has already checked on a parsed message:
bytes that repeat the key field further on (two serialized entities
concatenated) or the kind inside the key's last element, which no serializer
writes, are judged by their first key (see ``_key_head``).

Example
-------
>>> class Person(LazyEntity):
...     name = StringProperty()
...     scores = IntegerProperty(repeated=True)
>>> blob = Person.encode(Key(("Person", 7), project="demo"), {"name": "Ada", "scores": [3, 1]})
>>> person = Person.from_bytes(blob)
>>> person.name, person.scores, person.key
('Ada', [3, 1], Key('Person', 7))
>>> person.to_bytes() is blob
True
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import repeat
from operator import attrgetter
from typing import Any, ClassVar, NamedTuple, TypeVar

from google.protobuf.message import DecodeError

from stratabench.errors import DataError
from stratabench.lazy.messages import EntityMessage, KeyMessage

__all__ = [
    "BlobProperty",
    "BooleanProperty",
    "DateTimeProperty",
    "FloatProperty",
    "GenericProperty",
    "GeoPoint",
    "IntegerProperty",
    "Key",
    "LazyEntity",
    "Property",
    "StringProperty",
    "TextProperty",
]

E = TypeVar("E", bound="LazyEntity")

_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_UTC = datetime.timezone.utc
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
# Datastore refuses indexed strings and blobs longer than this (bytes).
_MAX_INDEXED_BYTES = 1500
_timedelta = datetime.timedelta


class GeoPoint(NamedTuple):
    """A stored geographical point (``geo_point_value``)."""

    latitude: float
    longitude: float


# --- keys ----------------------------------------------------------------------------------------


class Key:
    """An immutable Datastore key: a path of (kind, id or name) pairs in a partition.

    It mirrors ndb's ``Key`` reading methods (``pairs()``, ``kind()``,
    ``id()``, ``project()``, ``namespace()``, ...) and compares equal to an
    ndb key of the same project, namespace, database and path; its hash is
    ndb's (the hash of the pairs).

    Parameters
    ----------
    pairs
        (kind, id) pairs from root to leaf; an id is an ``int`` or a ``str``
        name (``None`` for an incomplete key).
    project, namespace, database
        The partition; empty strings and ``None`` mean the default.
    """

    __slots__ = ("_database", "_namespace", "_pairs", "_project")

    def __init__(
        self, *pairs: tuple[str, int | str | None], project: str = "", namespace: str | None = None,
        database: str | None = None,
    ) -> None:
        if not pairs:
            raise ValueError("a key needs at least one (kind, id) pair")
        self._pairs = tuple((str(kind), ident) for kind, ident in pairs)
        self._project = project or ""
        self._namespace = namespace or None
        self._database = database or ""

    @classmethod
    def from_message(cls, message: Any) -> Key:
        """The key held by a v1 ``Key`` message (any class with the v1 field names)."""
        pairs = []
        for element in message.path:
            which = element.WhichOneof("id_type")
            ident = element.id if which == "id" else element.name if which == "name" else None
            pairs.append((element.kind, ident))
        if not pairs:
            raise DataError("a stored key has an empty path")
        partition = message.partition_id
        return cls(
            *pairs, project=partition.project_id, namespace=partition.namespace_id, database=partition.database_id
        )

    def to_message(self) -> Any:
        """A new v1 ``Key`` message (the project's own message class)."""
        message = KeyMessage()
        self._fill(message)
        return message

    def _fill(self, message: Any) -> None:
        if self._project:
            message.partition_id.project_id = self._project
        if self._database:
            message.partition_id.database_id = self._database
        if self._namespace:
            message.partition_id.namespace_id = self._namespace
        for kind, ident in self._pairs:
            element = message.path.add(kind=kind)
            if isinstance(ident, int):
                element.id = ident
            elif ident is not None:
                element.name = ident

    def pairs(self) -> tuple[tuple[str, int | str | None], ...]:
        """The (kind, id) pairs, root first."""
        return self._pairs

    def flat(self) -> tuple[str | int | None, ...]:
        """The pairs flattened: ``('Parent', 1, 'Child', 'x')``."""
        return tuple(part for pair in self._pairs for part in pair)

    def kind(self) -> str:
        """The leaf's kind."""
        return self._pairs[-1][0]

    def id(self) -> int | str | None:
        """The leaf's integer id or string name; ``None`` for an incomplete key."""
        return self._pairs[-1][1]

    def project(self) -> str:
        """The project (``""`` when the stored key named none)."""
        return self._project

    app = project

    def namespace(self) -> str | None:
        """The namespace, ``None`` for the default one (as ndb)."""
        return self._namespace

    def database(self) -> str:
        """The database id, ``""`` for the default one."""
        return self._database

    def parent(self) -> Key | None:
        """The key without its leaf pair, or ``None`` for a root key."""
        if len(self._pairs) == 1:
            return None
        return Key(*self._pairs[:-1], project=self._project, namespace=self._namespace, database=self._database)

    def _tuple(self) -> tuple[Any, ...]:
        return (self._project, self._namespace, self._database, self._pairs)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Key):
            return self._tuple() == other._tuple()
        # An ndb key (or any key with ndb's reading methods): ndb's own __eq__
        # returns NotImplemented for foreign keys, so Python asks us.
        try:
            theirs = (
                other.project() or "",  # type: ignore[attr-defined]
                other.namespace() or None,  # type: ignore[attr-defined]
                other.database() or "",  # type: ignore[attr-defined]
                tuple(tuple(pair) for pair in other.pairs()),  # type: ignore[attr-defined]
            )
        except (AttributeError, TypeError):
            return NotImplemented
        return self._tuple() == theirs

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self._pairs)

    def __repr__(self) -> str:
        args = [repr(part) for part in self.flat()]
        if self._namespace:
            args.append(f"namespace={self._namespace!r}")
        return f"Key({', '.join(args)})"


# --- reading stored values -----------------------------------------------------------------------


def _timestamp_naive(value: Any) -> datetime.datetime:
    ts = value.timestamp_value
    return _EPOCH + _timedelta(0, ts.seconds, ts.nanos // 1000)


def _timestamp_aware(value: Any) -> datetime.datetime:
    ts = value.timestamp_value
    return _EPOCH_UTC + _timedelta(0, ts.seconds, ts.nanos // 1000)


def _null(value: Any) -> None:
    return None


def _key_value(value: Any) -> Key:
    return Key.from_message(value.key_value)


def _geo_point(value: Any) -> GeoPoint:
    point = value.geo_point_value
    return GeoPoint(point.latitude, point.longitude)


def _unsupported(value: Any) -> Any:
    raise DataError(
        f"a stored {value.WhichOneof('value_type')} property value is not supported by the lazy entity"
    )


def _array_of(table: dict[str | None, Callable[[Any], Any]]) -> Callable[[Any], list[Any]]:
    def read_array(value: Any) -> list[Any]:
        return [table[item.WhichOneof("value_type")](item) for item in value.array_value.values]

    return read_array


def _make_table(timestamp: Callable[[Any], datetime.datetime]) -> dict[str | None, Callable[[Any], Any]]:
    table: dict[str | None, Callable[[Any], Any]] = {
        # attrgetter is a C callable: no Python frame for the common scalars.
        "string_value": attrgetter("string_value"),
        "integer_value": attrgetter("integer_value"),
        "double_value": attrgetter("double_value"),
        "boolean_value": attrgetter("boolean_value"),
        "blob_value": attrgetter("blob_value"),
        "timestamp_value": timestamp,
        "null_value": _null,
        None: _null,
        "key_value": _key_value,
        "geo_point_value": _geo_point,
        "entity_value": _unsupported,
    }
    table["array_value"] = _array_of(table)
    return table


# What ndb's Expando returns for an undeclared property: the datastore
# library's generic types, timestamps timezone-aware in UTC.
_GENERIC = _make_table(_timestamp_aware)


def _read_generic(value: Any) -> Any:
    return _GENERIC[value.WhichOneof("value_type")](value)


# --- writing values ------------------------------------------------------------------------------


def _put(target: Any, value: Any, exclude: bool) -> None:
    """Store one Python value into an empty v1 ``Value`` message."""
    kind = type(value)
    if kind is str:
        target.string_value = value
    elif kind is bool:
        target.boolean_value = value
    elif kind is int:
        target.integer_value = value
    elif kind is float:
        target.double_value = value
    elif kind is bytes:
        target.blob_value = value
    elif isinstance(value, datetime.datetime):
        delta = (value - _EPOCH) if value.tzinfo is None else (value - _EPOCH_UTC)
        seconds, micros = divmod(delta // _timedelta(microseconds=1), 1_000_000)
        target.timestamp_value.seconds = seconds
        target.timestamp_value.nanos = micros * 1000
    elif kind is list:
        array = target.array_value
        array.SetInParent()  # an empty list is still an array, not a null
        for item in value:
            _put(array.values.add(), item, exclude)
        return  # v1 puts the index flag on each element, never on the array
    elif value is None:
        target.null_value = 0
    elif isinstance(value, Key):
        value._fill(target.key_value)
    elif isinstance(value, GeoPoint):
        target.geo_point_value.latitude = value.latitude
        target.geo_point_value.longitude = value.longitude
    else:
        raise TypeError(f"a {kind.__name__} cannot be stored in a Datastore property")
    if exclude:
        target.exclude_from_indexes = True


def _stored_excluded(value: Any) -> bool:
    if value.WhichOneof("value_type") == "array_value":
        items = value.array_value.values
        return bool(items) and all(item.exclude_from_indexes for item in items)
    return bool(value.exclude_from_indexes)


def _too_long_to_index(value: Any) -> bool:
    if isinstance(value, str):
        return len(value) * 4 > _MAX_INDEXED_BYTES and len(value.encode()) > _MAX_INDEXED_BYTES
    return isinstance(value, bytes) and len(value) > _MAX_INDEXED_BYTES


# --- properties ----------------------------------------------------------------------------------

#: How a class reads one stored name: (attribute name, shortcut or None, conversion table).
_Reader = tuple[str, "Callable[[Any], Any] | None", "dict[str | None, Callable[[Any], Any]]"]
#: Value fields whose non-zero content proves they are the one set.
_FAST_FIELDS = frozenset({"string_value", "integer_value", "double_value", "boolean_value", "blob_value"})


class Property:
    """A declared property: reads convert by its type, writes are checked by it.

    A non-data descriptor: the first read converts the stored value and puts
    it in the instance's ``__dict__`` under the attribute name, where every
    later read finds it without calling the descriptor again. Assignments go
    through :meth:`LazyEntity.__setattr__`, which validates with
    :meth:`validate`.

    Parameters
    ----------
    name
        The stored name, when it differs from the attribute name.
    indexed
        Whether writes mark the value as indexed; defaults per type as ndb's.
    repeated
        Whether the property holds a list of values.
    """

    #: Whether values of this type are indexed unless told otherwise.
    default_indexed: ClassVar[bool] = True
    #: Conversions by stored value type; subclasses adjust entries.
    _table: ClassVar[dict[str | None, Callable[[Any], Any]]] = _make_table(_timestamp_naive)
    #: The ``Value`` field this type is normally stored in, read without asking
    #: which field is set: a oneof member that is not set reads as its zero
    #: value, so a non-zero read proves it is the one set. Zero values fall
    #: back to the table (they may be a null or another type).
    _fast_field: ClassVar[str | None] = None

    def __init__(self, name: str | None = None, *, indexed: bool | None = None, repeated: bool = False) -> None:
        self.stored_name = name or ""
        self.attr_name = ""
        self.indexed = self.default_indexed if indexed is None else indexed
        self.repeated = repeated
        #: Stored value type (``WhichOneof``) → conversion to what a read returns.
        self.table: dict[str | None, Callable[[Any], Any]] = _repeated_table(self._table) if repeated else self._table
        #: The shortcut for the usual stored type (see ``_fast_field``), if any.
        self.fast: Callable[[Any], Any] | None = (
            attrgetter(self._fast_field) if self._fast_field and not repeated else None
        )

    def __set_name__(self, owner: type, name: str) -> None:
        self.attr_name = name
        if not self.stored_name:
            self.stored_name = name

    def __get__(self, instance: LazyEntity | None, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance._lz_message.properties.get(self.stored_name)
        if value is None:
            result: Any = [] if self.repeated else None
        else:
            fast = self.fast
            if fast is None or not (result := fast(value)):
                result = self.table[value.WhichOneof("value_type")](value)
        instance.__dict__[self.attr_name] = result
        return result

    def read(self, value: Any) -> Any:
        """Convert one stored v1 ``Value`` message as a read of this property does."""
        fast = self.fast
        if fast is None or not (result := fast(value)):
            result = self.table[value.WhichOneof("value_type")](value)
        return result

    def default(self) -> Any:
        """The value of the property when it is not stored: ``None``, or ``[]`` if repeated."""
        return [] if self.repeated else None

    def validate(self, value: Any) -> Any:
        """Check an assigned value and return it as a read would (lists copied)."""
        if self.repeated:
            if value is None:
                return []
            if not isinstance(value, (list, tuple)):
                raise TypeError(f"property {self.attr_name} is repeated: assign a list, not {value!r}")
            return [self._validate_item(item) for item in value]
        return None if value is None else self._validate_item(value)

    def _validate_item(self, value: Any) -> Any:
        return value

    def _reject(self, expected: str, value: Any) -> TypeError:
        return TypeError(f"property {self.attr_name} expects {expected}, not {type(value).__name__} {value!r}")

    def __repr__(self) -> str:
        options = [f"name={self.stored_name!r}"]
        if self.indexed != self.default_indexed:
            options.append(f"indexed={self.indexed}")
        if self.repeated:
            options.append("repeated=True")
        return f"{type(self).__name__}({', '.join(options)})"


def _repeated_table(table: dict[str | None, Callable[[Any], Any]]) -> dict[str | None, Callable[[Any], Any]]:
    """The conversions of a repeated property: always a list, ``[]`` for null or absent."""
    read_array = _array_of(table)

    def empty(value: Any) -> list[Any]:
        return []

    def single(convert: Callable[[Any], Any]) -> Callable[[Any], list[Any]]:
        # A projection query returns one scalar per entity for a repeated property.
        return lambda value: [convert(value)]

    repeated = {which: single(convert) for which, convert in table.items()}
    repeated.update({"array_value": read_array, "null_value": empty, None: empty})
    return repeated


def _str_from_blob(value: Any) -> str:
    text: str = value.blob_value.decode("utf-8")
    return text


class TextProperty(Property):
    """Unindexed text (``str``); stored bytes are decoded as UTF-8, as ndb does."""

    default_indexed = False
    _fast_field = "string_value"
    _table = {**Property._table, "blob_value": _str_from_blob, "timestamp_value": _timestamp_aware}

    def _validate_item(self, value: Any) -> Any:
        if isinstance(value, bytes):
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError:
                raise ValueError(f"property {self.attr_name} expects UTF-8 text; the bytes do not decode") from None
        if not isinstance(value, str):
            raise self._reject("str", value)
        if self.indexed and len(value.encode()) > _MAX_INDEXED_BYTES:
            raise ValueError(f"property {self.attr_name} is indexed and longer than {_MAX_INDEXED_BYTES} bytes")
        return str(value)


class StringProperty(TextProperty):
    """Indexed text (``str``), at most 1500 bytes when indexed."""

    default_indexed = True


class IntegerProperty(Property):
    """A signed 64-bit integer (``int``)."""

    _fast_field = "integer_value"
    _table = {**Property._table, "timestamp_value": _timestamp_aware}

    def _validate_item(self, value: Any) -> Any:
        if not isinstance(value, int):
            raise self._reject("int", value)
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise ValueError(f"property {self.attr_name} holds 64-bit integers; {value} is out of range")
        return int(value)


class FloatProperty(Property):
    """A double (``float``); integers assigned are converted, as ndb does."""

    _fast_field = "double_value"
    _table = {**Property._table, "timestamp_value": _timestamp_aware}

    def _validate_item(self, value: Any) -> Any:
        if not isinstance(value, (int, float)):
            raise self._reject("float", value)
        return float(value)


class BooleanProperty(Property):
    """A ``bool``."""

    _fast_field = "boolean_value"
    _table = {**Property._table, "timestamp_value": _timestamp_aware}

    def _validate_item(self, value: Any) -> Any:
        if not isinstance(value, bool):
            raise self._reject("bool", value)
        return value


class DateTimeProperty(Property):
    """A naive ``datetime`` meaning UTC, microsecond precision (ndb's default, no ``tzinfo``)."""

    def _validate_item(self, value: Any) -> Any:
        if not isinstance(value, datetime.datetime):
            raise self._reject("datetime", value)
        if value.tzinfo is not None:
            raise ValueError(f"property {self.attr_name} holds naive datetimes (UTC), as ndb does; got {value!r}")
        return value


class BlobProperty(Property):
    """Unindexed ``bytes`` (ndb's default for blobs)."""

    default_indexed = False
    _fast_field = "blob_value"
    _table = {**Property._table, "timestamp_value": _timestamp_aware}

    def _validate_item(self, value: Any) -> Any:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise self._reject("bytes", value)
        value = bytes(value)
        if self.indexed and len(value) > _MAX_INDEXED_BYTES:
            raise ValueError(f"property {self.attr_name} is indexed and longer than {_MAX_INDEXED_BYTES} bytes")
        return value


class GenericProperty(Property):
    """Any stored type, typed as ndb's ``Expando`` types undeclared values (aware datetimes)."""

    _table = _GENERIC

    def _validate_item(self, value: Any) -> Any:
        return _validate_generic(value, self.attr_name)


class _DynamicProperty(GenericProperty):
    """A descriptor a dynamic class learns for an undeclared name it has read once.

    Reads of undeclared names first reach ``__getattr__``, the catch-all hook
    that normal attribute lookup calls only after failing, which is about
    twice the cost of a descriptor. Once a dynamic class has read a name, it
    gets one of these, so the same name on the next entity is resolved like a
    declared property. Unlike a declared property, it is absent (raises
    ``AttributeError``) when an entity does not store the name.
    """

    def __init__(self, first_seen: str | None) -> None:
        super().__init__()
        # Undeclared values usually keep the type of the first one seen, so
        # that field is this descriptor's shortcut.
        if first_seen in _FAST_FIELDS:
            self.fast = attrgetter(first_seen)

    def __get__(self, instance: LazyEntity | None, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance._lz_message.properties.get(self.stored_name)
        if value is None:
            raise AttributeError(f"{type(instance).__name__} entity has no property {self.stored_name!r}")
        fast = self.fast
        if fast is None or not (result := fast(value)):
            result = _GENERIC[value.WhichOneof("value_type")](value)
        instance.__dict__[self.attr_name] = result
        return result


def _validate_generic(value: Any, name: str) -> Any:
    """An undeclared (dynamic) value, normalised to what a read returns."""
    if value is None or type(value) in (str, bool, int, float, bytes):
        if type(value) is int and not _INT64_MIN <= value <= _INT64_MAX:
            raise ValueError(f"property {name} holds 64-bit integers; {value} is out of range")
        return value
    if isinstance(value, datetime.datetime):
        return value.replace(tzinfo=_UTC) if value.tzinfo is None else value.astimezone(_UTC)
    if isinstance(value, (list, tuple)):
        return [_validate_generic(item, name) for item in value]
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return _validate_generic(int(value), name)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, (Key, GeoPoint)):
        return value
    raise TypeError(f"property {name}: a {type(value).__name__} cannot be stored in a Datastore property")


# --- the identity check --------------------------------------------------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(tag: int, payload: bytes) -> bytes:
    """One length-delimited field: ``tag`` is the field number and wire type byte."""
    return bytes((tag,)) + _varint(len(payload)) + payload


def _key_head(blob: bytes, key: Any) -> bytes | None:
    """The bytes of a stored entity from its start to the end of its key's last kind, or ``None``.

    Checking an entity's kind on the parsed message builds upb wrappers for
    the key, its path and its last element: about half a microsecond, a third
    of the whole parse at 10 properties. Serializers write the key first
    (field 1), as a partition then the path, each element's kind first. When
    ``blob`` is written so, its prefix up to the last element's kind is its
    *head*, and any bytes starting with the same head hold a key of the same
    partition, the same ancestors and the same kind: the head fixes the key's
    length and the last element's length, so that element still ends the key.

    What the head does not see: a key field repeated later in the bytes (two
    serialized entities concatenated, which protobuf merges into one key with
    a longer path) and a kind repeated inside the last element after its id.
    No serializer writes either; both parse, and both pass as the first key.

    ``key`` is the parsed key of ``blob``, already checked. Returns ``None``
    when the bytes hold the key otherwise (fields out of order or repeated,
    unknown fields), so such entities are always checked on the message.
    """
    leaf = key.path[-1]
    fields = [_field(0x0A, key.partition_id.SerializeToString())] if key.HasField("partition_id") else []
    fields += [_field(0x12, element.SerializeToString()) for element in key.path]
    # Rebuilt field by field (rather than key.SerializeToString()), so that
    # unknown fields of the key make the bytes differ instead of hiding
    # where its last element starts.
    written = _field(0x0A, b"".join(fields))
    if not blob.startswith(written):
        return None
    kind_at = len(written) - len(leaf.SerializeToString())
    kind_field = _field(0x0A, leaf.kind.encode())
    if not blob.startswith(kind_field, kind_at):
        return None
    return blob[: kind_at + len(kind_field)]


def _all_start_with(blobs: Sequence[Any], heads: tuple[bytes, ...]) -> bool:
    """Whether every blob (none ``None``) starts with one of ``heads``; False when a blob has no ``startswith``."""
    try:
        if len(heads) == 1:
            # Byte strings sharing a prefix are contiguous in sorted order, so
            # when the smallest and the largest start with it, all do: two
            # C-level scans instead of a method call per blob.
            low: bytes = min(blobs)
            high: bytes = max(blobs)
            return low.startswith(heads[0]) and high.startswith(heads[0])
        return all(map(_bytes_startswith, blobs, repeat(heads)))
    except (TypeError, AttributeError):  # a memoryview, say: the caller checks one by one
        return False


# --- the entity ----------------------------------------------------------------------------------

_DELETED = object()
_from_string = EntityMessage.FromString
_bytes_startswith = bytes.startswith
#: Key layouts a class remembers (int ids take one per varint length; names one per length).
_MAX_HEADS = 16
_RESERVED_PREFIX = "_lz"


class LazyEntity:
    """Base class of lazy entity classes; one subclass per kind.

    Declare properties as class attributes (like an ndb ``Model``), or build
    a class at run time with :meth:`define`. Class keywords:

    ``kind``
        The stored kind (default: the class name).
    ``dynamic``
        Whether undeclared stored properties are readable (like ndb's
        ``Expando``); otherwise reading one raises ``AttributeError``, as
        ndb's ``Model`` does, though write-back still keeps it.

    Instances come from :meth:`from_bytes`, :meth:`from_bytes_many` or
    :meth:`from_message`, or are built new from values (``Person(key,
    name="Ada")``). Reading an attribute converts its stored value once and
    caches it; :meth:`materialize` converts everything at once.
    """

    __slots__ = ("__dict__", "_lz_blob", "_lz_dirty", "_lz_key", "_lz_message", "_lz_origin")
    _lz_blob: bytes
    _lz_dirty: dict[str, Property | None]
    _lz_key: Key
    _lz_message: Any
    _lz_origin: object

    _lz_kind: ClassVar[str] = ""
    _lz_dynamic: ClassVar[bool] = False
    #: Declared properties by attribute name.
    _lz_properties: ClassVar[dict[str, Property]] = {}
    #: Stored name → (attribute name, property) of declared properties.
    _lz_readers: ClassVar[dict[str, _Reader]] = {}
    #: Whether every declared property is stored under its attribute name.
    _lz_plain_names: ClassVar[bool] = True
    #: Undeclared names this (dynamic) class has learned descriptors for, and how to read them.
    _lz_learned: ClassVar[dict[str, _Reader]] = {}
    #: Stored bytes up to the key's last kind, for the key layouts this class has checked (see ``_key_head``).
    _lz_heads: ClassVar[tuple[bytes, ...]] = ()

    def __init_subclass__(cls, *, kind: str | None = None, dynamic: bool | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        properties: dict[str, Property] = {}
        for base in reversed(cls.__mro__[1:]):
            properties.update(getattr(base, "_lz_properties", {}))
        for attr, value in vars(cls).items():
            if isinstance(value, Property):
                if attr.startswith(_RESERVED_PREFIX) or attr in _OWN_NAMES:
                    raise TypeError(f"{cls.__name__}.{attr}: the name is used by LazyEntity itself; pick another")
                properties[attr] = value
        cls._lz_properties = properties
        cls._lz_readers = {prop.stored_name: (attr, prop.fast, prop.table) for attr, prop in properties.items()}
        cls._lz_plain_names = all(prop.stored_name == attr for attr, prop in properties.items())
        cls._lz_kind = kind or cls.__name__
        cls._lz_learned = {}
        cls._lz_heads = ()
        if dynamic is not None:
            cls._lz_dynamic = dynamic

    @classmethod
    def define(
        cls: type[E], kind: str, properties: Mapping[str, Property], *, dynamic: bool = False, name: str | None = None
    ) -> type[E]:
        """Build a lazy entity class at run time.

        Parameters
        ----------
        kind
            The stored kind the class reads.
        properties
            Attribute name → declared property.
        dynamic
            Whether undeclared stored properties are readable (ndb's Expando).
        name
            The class name; defaults to ``kind`` when it is an identifier.
        """
        class_name = name or (kind if kind.isidentifier() else "LazyEntityClass")
        namespace: dict[str, Any] = {"__slots__": (), **properties}
        return type(class_name, (cls,), namespace, kind=kind, dynamic=dynamic)

    # --- construction ----------------------------------------------------------------------------

    def __init__(self, key: Key | None = None, **values: Any) -> None:
        message = EntityMessage()
        if key is not None:
            if key.kind() != self._lz_kind:
                raise ValueError(f"a {type(self).__name__} key must be of kind {self._lz_kind!r}, not {key.kind()!r}")
            key._fill(message.key)
        _set_message(self, message)
        _set_dirty(self, {})
        for name, value in values.items():
            setattr(self, name, value)

    @classmethod
    def from_bytes(cls: type[E], data: bytes, *, key: object = None) -> E:
        """Parse one stored entity; no property value is converted yet.

        Parameters
        ----------
        data
            A serialized v1 ``Entity``, as ndb and the Datastore store it.
        key
            What the caller asked for (any object), named in error messages.

        Raises
        ------
        DataError
            When the bytes do not parse, hold no key, or hold another kind.
        """
        return cls.from_bytes_many((data,), keys=(key,))[0]  # type: ignore[return-value]

    @classmethod
    def from_bytes_many(
        cls: type[E], blobs: Iterable[bytes | None], *, keys: Sequence[object] | None = None, defer: bool = False
    ) -> list[E | None]:
        """Parse a batch of stored entities, keeping ``None`` (a missing entity) in its slot.

        Parameters
        ----------
        blobs
            Serialized v1 ``Entity`` messages, or ``None`` for a miss.
        keys
            The keys asked for, aligned with ``blobs``, for error messages.
        defer
            Parse each entity on its first use instead of now (a variant
            that moves the failure point to the first read).

        Raises
        ------
        DataError
            When an entity does not parse, holds no key, or holds another kind
            (only at first use with ``defer=True``).
        """
        if not isinstance(blobs, list):
            blobs = list(blobs)
        if defer:
            return cls._lz_one_by_one(blobs, keys, defer=True)
        # The per-entity cost here is what "read 0" measures against the bare
        # parse (about 1.2 µs at 10 properties), so the usual batch (no miss,
        # every key of an already seen layout) runs as C-level loops over the
        # whole batch: parse, identity check on the bytes, instances, slots.
        if not blobs:
            return []
        messages: list[Any] | None = None
        if None not in blobs:
            try:
                messages = list(map(_from_string, blobs))
            except DecodeError:
                pass  # the general loop below finds which one and says so
        if messages is None:
            return cls._lz_one_by_one(blobs, keys)
        if not _all_start_with(blobs, cls._lz_heads):
            check = cls._lz_check_identity
            for index, (blob, message) in enumerate(zip(blobs, messages)):
                check(message, blob, keys, index)
        instances: list[E | None] = list(map(object.__new__, repeat(cls, len(blobs))))
        # The slot setters return None: any() runs them all at C speed.
        any(map(_set_message, instances, messages))
        any(map(_set_blob, instances, blobs))
        return instances

    @classmethod
    def _lz_one_by_one(
        cls: type[E], blobs: list[bytes | None], keys: Sequence[object] | None, *, defer: bool = False
    ) -> list[E | None]:
        """:meth:`from_bytes_many` one entity at a time: a batch with misses, one that does not parse, or ``defer``.

        Deferred instances keep their bytes and the key asked for, and parse on first use.
        """
        new = object.__new__
        check = cls._lz_check_identity
        result: list[E | None] = []
        for index, blob in enumerate(blobs):
            if blob is None:
                result.append(None)
                continue
            instance = new(cls)
            _set_blob(instance, blob)
            if defer:
                _set_origin(instance, keys[index] if keys is not None else None)
            else:
                try:
                    message = _from_string(blob)
                except DecodeError:
                    raise _corrupt(keys, index, cls._lz_kind, "do not parse as a Datastore v1 Entity") from None
                check(message, blob, keys, index)
                _set_message(instance, message)
            result.append(instance)
        return result

    @classmethod
    def _lz_check_identity(cls, message: Any, blob: object, keys: Sequence[object] | None, index: int) -> None:
        """Check that a parsed entity has a key of this class's kind (spec §6.2).

        Bytes that start with one of the class's learned heads (see
        :func:`_key_head`) pass at the cost of a prefix comparison. Others are
        checked on the parsed key, which costs wrappers for the key, its path
        and its last element (about half a microsecond); when the bytes hold
        their key as serializers write it, their head is learned, so the next
        entity of the same layout takes the prefix comparison.
        """
        heads = cls._lz_heads
        if type(blob) is bytes and blob.startswith(heads):
            return
        kind = cls._lz_kind
        path = message.key.path
        if not path or path[-1].kind != kind:
            raise _wrong_identity(keys, index, kind, path)
        if type(blob) is bytes and len(heads) < _MAX_HEADS:
            head = _key_head(blob, message.key)
            if head is not None:
                cls._lz_heads = (*heads, head)

    @classmethod
    def from_message(cls: type[E], message: Any, *, key: object = None) -> E:
        """Wrap an already parsed v1 ``Entity`` message (not copied; the entity owns it from now on).

        Any message class with the v1 field names works, for example the raw
        ``_pb`` of a ``google.cloud.datastore_v1`` response. Raises
        :class:`DataError` when it holds no key or another kind.
        """
        cls._lz_check_identity(message, None, (key,), 0)
        instance = object.__new__(cls)
        _set_message(instance, message)
        return instance

    def __getattr__(self, name: str) -> Any:
        # Reached only when normal lookup fails: an unset slot, an undeclared
        # property, or a deferred parse.
        if name.startswith(_RESERVED_PREFIX):
            if name == "_lz_message":
                return self._lz_parse_deferred()
            raise AttributeError(name)
        cls = type(self)
        if cls._lz_dynamic:
            value = self._lz_message.properties.get(name)
            if value is not None and name not in cls._lz_readers:
                result = _read_generic(value)
                self.__dict__[name] = result
                cls._lz_learn(name, value)
                return result
        raise AttributeError(f"{cls.__name__} entity has no property {name!r}")

    def _lz_parse_deferred(self) -> Any:
        try:
            blob = self._lz_blob
        except AttributeError:
            raise AttributeError("_lz_message") from None
        origin = getattr(self, "_lz_origin", None)
        cls = type(self)
        try:
            message = _from_string(blob)
        except DecodeError:
            raise _corrupt((origin,), 0, cls._lz_kind, "do not parse as a Datastore v1 Entity") from None
        cls._lz_check_identity(message, blob, (origin,), 0)
        _set_message(self, message)
        return message

    @classmethod
    def _lz_learn(cls, name: str, value: Any) -> _Reader:
        """Give a dynamic class a descriptor for an undeclared name (see ``_DynamicProperty``)."""
        prop = _DynamicProperty(value.WhichOneof("value_type"))
        prop.__set_name__(cls, name)
        reader: _Reader = (name, prop.fast, prop.table)
        cls._lz_learned[name] = reader
        # Never shadow the class's own attributes; odd names stay on the hook.
        if name.isidentifier() and not hasattr(cls, name):
            setattr(cls, name, prop)
        return reader

    # --- reading ---------------------------------------------------------------------------------

    @property
    def key(self) -> Key:
        """The entity's key (decoded on first use)."""
        try:
            return self._lz_key
        except AttributeError:
            key = Key.from_message(self._lz_message.key)
            _set_key(self, key)
            return key

    @property
    def message(self) -> Any:
        """The parsed v1 ``Entity`` message (do not modify it; assign attributes instead)."""
        return self._lz_message

    def materialize(self) -> dict[str, Any]:
        """Convert every property at once and return them by attribute name.

        Reads that follow are plain attribute reads. Declared properties that
        are not stored appear with their defaults; undeclared stored ones
        appear only for a dynamic class. The dict is new; its values are the
        instance's own (a list read here is the list later reads return).
        """
        cls = type(self)
        readers = cls._lz_readers
        get = readers.get
        result: dict[str, Any] = {}
        declared_seen = 0
        # One loop per case so that the common one (no dynamic properties, no
        # renamed ones) does the least work per property.
        if cls._lz_dynamic:
            learned = cls._lz_learned
            for name, value in self._lz_message.properties.items():
                entry = get(name)
                if entry is None:
                    entry = learned.get(name) or cls._lz_learn(name, value)
                else:
                    declared_seen += 1
                fast = entry[1]
                if fast is None or not (item := fast(value)):
                    item = entry[2][value.WhichOneof("value_type")](value)
                result[entry[0]] = item
        elif cls._lz_plain_names:
            for name, value in self._lz_message.properties.items():
                entry = get(name)
                if entry is not None:
                    fast = entry[1]
                    if fast is None or not (item := fast(value)):
                        item = entry[2][value.WhichOneof("value_type")](value)
                    result[name] = item
            declared_seen = len(result)
        else:
            for name, value in self._lz_message.properties.items():
                entry = get(name)
                if entry is not None:
                    fast = entry[1]
                    if fast is None or not (item := fast(value)):
                        item = entry[2][value.WhichOneof("value_type")](value)
                    result[entry[0]] = item
            declared_seen = len(result)
        if declared_seen != len(readers):
            for attr, prop in cls._lz_properties.items():
                if attr not in result:
                    result[attr] = prop.default()
        cached = self.__dict__
        if cached:
            result.update(cached)
        cached.update(result)
        return result

    # --- writing ---------------------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        cls = type(self)
        prop = cls._lz_properties.get(name)
        if prop is not None:
            stored = prop.stored_name
            value = prop.validate(value)
        elif cls._lz_dynamic and (
            name in cls._lz_learned or not (name.startswith(_RESERVED_PREFIX) or hasattr(cls, name))
        ):
            stored = name
            value = _validate_generic(value, name)
        elif name.startswith(_RESERVED_PREFIX) or hasattr(cls, name):
            object.__setattr__(self, name, value)  # a slot, or a read-only attribute refusing
            return
        else:
            raise AttributeError(
                f"{cls.__name__} has no property {name!r}; declare it or define the class with dynamic=True"
            )
        self.__dict__[name] = value
        self._lz_dirty_map()[stored] = prop

    def __delattr__(self, name: str) -> None:
        cls = type(self)
        prop = cls._lz_properties.get(name)
        stored = prop.stored_name if prop is not None else name
        properties = self._lz_message.properties
        if prop is None and not (cls._lz_dynamic and stored in properties):
            raise AttributeError(f"{cls.__name__} entity has no property {name!r} to delete")
        self.__dict__.pop(name, None)
        # Deletion is applied to the message at once, so later reads see the default.
        if stored in properties:
            del properties[stored]
        self._lz_dirty_map().pop(stored, None)
        _set_blob_changed(self)

    def _lz_dirty_map(self) -> dict[str, Property | None]:
        try:
            return self._lz_dirty
        except AttributeError:
            dirty: dict[str, Property | None] = {}
            _set_dirty(self, dirty)
            return dirty

    def _lz_mutated_lists(self) -> list[str]:
        """Attribute names whose cached list differs from the stored one (changed in place)."""
        cached = self.__dict__
        if not cached:
            return []
        changed = []
        properties = self._lz_message.properties
        cls = type(self)
        for attr, value in cached.items():
            if type(value) is not list:
                continue
            prop = cls._lz_properties.get(attr)
            stored = prop.stored_name if prop is not None else attr
            current = properties.get(stored)
            if current is None:
                before: Any = []
            else:
                before = prop.read(current) if prop is not None else _read_generic(current)
            if before != value or any(type(a) is not type(b) for a, b in zip(before, value)):
                changed.append(attr)
        return changed

    def to_bytes(self) -> bytes:
        """The entity as stored bytes.

        Unmodified, it returns the very bytes it was read from. Modified (by
        assignment, deletion, or a list read and then changed in place), it
        re-encodes the parsed message with only those properties replaced:
        every other property keeps its stored value and index flag.
        """
        dirty = getattr(self, "_lz_dirty", None)
        blob = getattr(self, "_lz_blob", None)
        mutated = self._lz_mutated_lists()
        if not dirty and not mutated and blob is not None:
            return blob  # type: ignore[no-any-return]
        message = self._lz_message
        properties = message.properties
        cls = type(self)
        pending: dict[str, Property | None] = dict(dirty or {})
        for attr in mutated:
            prop = cls._lz_properties.get(attr)
            pending[prop.stored_name if prop is not None else attr] = prop
        for stored, prop in pending.items():
            attr = prop.attr_name if prop is not None else stored
            value = self.__dict__[attr]
            if prop is not None:
                exclude = not prop.indexed
            elif stored in properties:
                exclude = _stored_excluded(properties[stored])
            else:
                exclude = _too_long_to_index(value)  # ndb's Expando indexes what it can
            target = properties[stored]
            target.Clear()
            _put(target, value, exclude)
        blob = bytes(message.SerializeToString())
        _set_blob(self, blob)
        _set_dirty(self, {})
        return blob

    @classmethod
    def encode(cls, key: Key, values: Mapping[str, Any]) -> bytes:
        """Plain values → stored bytes through the class's schema (no instance kept).

        Declared properties are validated and flagged by their declaration;
        undeclared ones are accepted by dynamic classes only, indexed as
        ndb's Expando indexes them.
        """
        message = EntityMessage()
        if key.kind() != cls._lz_kind:
            raise ValueError(f"a {cls.__name__} key must be of kind {cls._lz_kind!r}, not {key.kind()!r}")
        key._fill(message.key)
        properties = message.properties
        declared = cls._lz_properties
        for name, value in values.items():
            prop = declared.get(name)
            if prop is not None:
                _put(properties[prop.stored_name], prop.validate(value), not prop.indexed)
            elif cls._lz_dynamic:
                value = _validate_generic(value, name)
                _put(properties[name], value, _too_long_to_index(value))
            else:
                raise AttributeError(f"{cls.__name__} has no property {name!r}; declare it or use dynamic=True")
        return bytes(message.SerializeToString())

    def __repr__(self) -> str:
        try:
            key: Any = self.key
        except (AttributeError, DataError):
            key = None
        return f"<{type(self).__name__} {key!r} ({len(self._lz_message.properties)} stored properties)>"


_OWN_NAMES = frozenset(name for name in vars(LazyEntity) if not name.startswith("__"))
_set_message = LazyEntity._lz_message.__set__
_set_blob = LazyEntity._lz_blob.__set__  # type: ignore[attr-defined]
_set_dirty = LazyEntity._lz_dirty.__set__  # type: ignore[attr-defined]
_set_key = LazyEntity._lz_key.__set__  # type: ignore[attr-defined]
_set_origin = LazyEntity._lz_origin.__set__  # type: ignore[attr-defined]
_del_blob = LazyEntity._lz_blob.__delete__  # type: ignore[attr-defined]


def _set_blob_changed(instance: LazyEntity) -> None:
    """Forget the stored bytes: the message no longer matches them."""
    try:
        _del_blob(instance)
    except AttributeError:
        pass


def _origin(keys: Sequence[object] | None, index: int) -> str:
    if keys is None or keys[index] is None:
        return f"entity #{index}"
    return f"key {keys[index]!r}"


def _corrupt(keys: Sequence[object] | None, index: int, kind: str, what: str) -> DataError:
    return DataError(f"stored {kind} bytes for {_origin(keys, index)} {what}; the record is corrupt or truncated")


def _wrong_identity(keys: Sequence[object] | None, index: int, kind: str, path: Any) -> DataError:
    if not path:
        return DataError(
            f"stored bytes for {_origin(keys, index)} hold no key (empty or not an entity); expected kind {kind}"
        )
    return DataError(f"stored bytes for {_origin(keys, index)} hold kind {path[-1].kind!r}, expected {kind!r}")
