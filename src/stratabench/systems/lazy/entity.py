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

It needs only the ``protobuf`` runtime (see :mod:`stratabench.systems.lazy.messages`);
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
writes, are judged by their first key (see ``_key_head`` in
:mod:`stratabench.systems.lazy._identity`).

The parts live beside this module: keys and points in
:mod:`stratabench.systems.lazy.keys`, stored values to Python and back in
``_values``, the property descriptors in :mod:`stratabench.systems.lazy.properties`,
the identity check on bytes in ``_identity``. This module holds the entity
and re-exports every public name, so ``stratabench.systems.lazy.entity.Key`` and
``stratabench.systems.lazy.Key`` still work.

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

from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from typing import Any, ClassVar, TypeVar

from google.protobuf.message import DecodeError

from stratabench.errors import DataError
from stratabench.systems.lazy._identity import _all_start_with, _key_head
from stratabench.systems.lazy._values import _put, _read_generic, _stored_excluded, _too_long_to_index
from stratabench.systems.lazy.keys import GeoPoint, Key
from stratabench.systems.lazy.messages import EntityMessage
from stratabench.systems.lazy.properties import (
    BlobProperty,
    BooleanProperty,
    DateTimeProperty,
    FloatProperty,
    GenericProperty,
    IntegerProperty,
    Property,
    StringProperty,
    TextProperty,
    _DynamicProperty,
    _Reader,
    _validate_generic,
)

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


_DELETED = object()
_from_string = EntityMessage.FromString
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
        """Check that a parsed entity has a key of this class's kind (docs/studies/entities.md §6.2).

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
