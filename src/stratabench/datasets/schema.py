"""The record schema: fields, their types, rows and time conversions.

Rows are tuples in field order, the canonical Python form of a record.
Canonical values by field type:

=========== ==========================================================
``bool``    ``bool``
``int``     ``int``, signed 64-bit
``float``   ``float`` (binary64)
``str``     ``str``
``bytes``   ``bytes``
``time_ns`` ``int`` nanoseconds since the Unix epoch (UTC)
``time_us`` aware UTC ``datetime`` (microsecond precision)
``list_str`` ``list`` of ``str``
``list_int`` ``list`` of ``int``
``any``     a JSON value (``dict``, ``list``, ``str``, ``int``, ``float``,
            ``bool``, ``None``)
=========== ==========================================================

It lives at the bottom floor (``datasets/``) because datasets build rows of
a schema and every layer above (codecs, mappers, stores) reads them.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Literal, get_args

from stratabench.errors import UsageError

__all__ = [
    "EPOCH",
    "FIELD_TYPES",
    "Field",
    "FieldType",
    "Row",
    "Schema",
    "datetime_from_us",
    "us_from_datetime",
]


FieldType = Literal["bool", "int", "float", "str", "bytes", "time_ns", "time_us", "list_str", "list_int", "any"]
FIELD_TYPES: tuple[str, ...] = get_args(FieldType)
"""Every field type a :class:`Field` may have."""

Row = tuple[Any, ...]
"""One record: its canonical values in field order."""

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
"""The Unix epoch as an aware UTC ``datetime``."""

_ONE_US = timedelta(microseconds=1)


def us_from_datetime(value: datetime) -> int:
    """Microseconds since the epoch of an aware ``datetime``, exactly (no float)."""
    return (value - EPOCH) // _ONE_US


def datetime_from_us(us: int) -> datetime:
    """The aware UTC ``datetime`` ``us`` microseconds after the epoch."""
    return EPOCH + timedelta(microseconds=us)


@dataclass(frozen=True)
class Field:
    """One field of a record.

    Attributes
    ----------
    name
        A Python identifier: it becomes a Struct attribute, a protobuf field
        and a map key.
    type
        One of :data:`FIELD_TYPES`; see the module docstring for the
        canonical value of each.
    """

    name: str
    type: FieldType

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or keyword.iskeyword(self.name):
            raise UsageError(f"field name {self.name!r} is not a Python identifier; rename the field")
        if self.type not in FIELD_TYPES:
            raise UsageError(f"field {self.name!r} has unknown type {self.type!r}; known: {', '.join(FIELD_TYPES)}")


@dataclass(frozen=True)
class Schema:
    """The shape of a record: a name and its fields in order.

    Attributes
    ----------
    name
        An identifier, used to name generated classes and modules.
    fields
        The fields, in the order of a row's values.
    """

    name: str
    fields: tuple[Field, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        if not self.name.isidentifier():
            raise UsageError(f"schema name {self.name!r} is not an identifier; rename the schema")
        if not self.fields:
            raise UsageError(f"schema {self.name!r} has no fields; give it at least one")
        names = [field.name for field in self.fields]
        if len(set(names)) != len(names):
            raise UsageError(f"schema {self.name!r} repeats a field name: {', '.join(names)}")

    @property
    def names(self) -> tuple[str, ...]:
        """The field names in order."""
        return tuple(field.name for field in self.fields)

    @property
    def types(self) -> frozenset[str]:
        """The field types the schema uses."""
        return frozenset(field.type for field in self.fields)
