"""The lazy entity's declared properties: descriptors that convert a stored value on its first read.

Each property type reads the stored types ndb reads for it and validates
what is assigned as ndb does. Part of the lazy entity
(:mod:`stratabench.systems.lazy.entity`), which documents the behaviour and its limits.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from operator import attrgetter
from typing import Any, ClassVar, Protocol

from stratabench.systems.lazy._values import (
    _GENERIC,
    _INT64_MAX,
    _INT64_MIN,
    _MAX_INDEXED_BYTES,
    _UTC,
    _array_of,
    _make_table,
    _timestamp_aware,
    _timestamp_naive,
)
from stratabench.systems.lazy.keys import GeoPoint, Key

__all__ = [
    "BlobProperty",
    "BooleanProperty",
    "DateTimeProperty",
    "FloatProperty",
    "GenericProperty",
    "IntegerProperty",
    "Property",
    "StringProperty",
    "TextProperty",
]


class _Stored(Protocol):
    """What a property reads from: an entity holding its stored v1 ``Entity`` message.

    The lazy entity (:class:`~stratabench.systems.lazy.entity.LazyEntity`) is
    the one such class; naming it here would make the entity and its
    properties import each other.
    """

    _lz_message: Any


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

    def __get__(self, instance: _Stored | None, owner: type | None = None) -> Any:
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

    def __get__(self, instance: _Stored | None, owner: type | None = None) -> Any:
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

