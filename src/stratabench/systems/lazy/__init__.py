"""stratabench's lazy entity: Datastore entities read like ndb models, converted on first read.

See :mod:`stratabench.systems.lazy.entity` for the behaviour and its limits. Only the
``protobuf`` runtime is needed.
"""

from __future__ import annotations

from stratabench.systems.lazy.entity import (
    BlobProperty,
    BooleanProperty,
    DateTimeProperty,
    FloatProperty,
    GenericProperty,
    GeoPoint,
    IntegerProperty,
    Key,
    LazyEntity,
    Property,
    StringProperty,
    TextProperty,
)
from stratabench.systems.lazy.messages import EntityMessage

__all__ = [
    "BlobProperty",
    "BooleanProperty",
    "DateTimeProperty",
    "EntityMessage",
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
