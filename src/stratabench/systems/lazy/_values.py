"""Stored v1 ``Value`` messages to Python values and back, as ndb types them.

Reading: tables from the stored value type (``WhichOneof``) to a conversion,
one per property type and one generic (undeclared properties, typed as ndb's
``Expando`` types them). Writing: one Python value into an empty ``Value``
message, with its index flag. Private to :mod:`stratabench.systems.lazy`.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from stratabench.errors import DataError
from stratabench.systems.lazy.keys import GeoPoint, Key

_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_UTC = datetime.timezone.utc
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
# Datastore refuses indexed strings and blobs longer than this (bytes).
_MAX_INDEXED_BYTES = 1500
_timedelta = datetime.timedelta


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

