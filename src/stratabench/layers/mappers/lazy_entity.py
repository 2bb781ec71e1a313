"""The ``lazy`` mapper: stratabench's own lazy entity over stored v1 entities.

Needs only ``protobuf`` at run time (:mod:`stratabench.systems.lazy`). Each kind of
the entities dataset gets a :class:`~stratabench.systems.lazy.LazyEntity` class built
from its declared properties (none for the ``dynamic`` flavour, which reads
everything as ndb's Expando would). Decoding parses every entity at once and
checks its kind; values are converted on first read and cached.

What it cannot do: see :mod:`stratabench.systems.lazy.entity` (no structured or
compressed properties, no ``tzinfo`` datetimes).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from stratabench.layers.mappers import MAPPERS
from stratabench.layers.mappers.base import KeyPath, Mapper

if TYPE_CHECKING:
    from stratabench.datasets.entities import EntitiesDataset
    from stratabench.systems.lazy import LazyEntity

__all__ = ["LazyEntityMapper", "lazy_class"]


@functools.lru_cache(maxsize=None)
def _lazy_class(kind: str, properties: tuple[tuple[str, str], ...], dynamic: bool) -> type[LazyEntity]:
    from stratabench.systems import lazy

    factories: dict[str, Any] = {
        "text": lazy.TextProperty,
        "string": lazy.StringProperty,
        "integer": lazy.IntegerProperty,
        "float": lazy.FloatProperty,
        "boolean": lazy.BooleanProperty,
        "datetime": lazy.DateTimeProperty,
        "blob": lazy.BlobProperty,
        "integers": functools.partial(lazy.IntegerProperty, repeated=True),
    }
    declared = {name: factories[kind_of]() for name, kind_of in properties}
    return lazy.LazyEntity.define(kind, declared, dynamic=dynamic)


def lazy_class(dataset: EntitiesDataset) -> type[LazyEntity]:
    """The lazy entity class of a dataset's kind (one per kind and process).

    ``model`` declares every property; ``expando`` declares them and accepts
    others; ``dynamic`` declares none.
    """
    declared = () if dataset.flavour == "dynamic" else tuple((p.name, p.type) for p in dataset.properties)
    return _lazy_class(dataset.kind, declared, dataset.flavour != "model")


@MAPPERS.register("lazy", requires=("google.protobuf",))
class LazyEntityMapper(Mapper):
    """stratabench's lazy entity: parse at once, convert each property on its first read.

    Parameters
    ----------
    dataset
        The kind's dataset.
    defer
        Parse each entity on its first use instead of at decode (the
        labelled parse-on-access variant, which moves the failure point).
    """

    label = "lazy entity"

    def __init__(self, dataset: EntitiesDataset, *, defer: bool = False) -> None:
        super().__init__(dataset)
        self.entity_class = lazy_class(dataset)
        self.defer = defer

    def decode_many(self, blobs: Sequence[bytes | None], keys: Sequence[object] | None = None) -> list[Any]:
        return self.entity_class.from_bytes_many(blobs, keys=keys, defer=self.defer)

    def read(self, objects: Sequence[Any], names: Sequence[str]) -> None:
        for entity in objects:
            if entity is not None:
                for name in names:
                    getattr(entity, name)

    def materialize(self, objects: Sequence[Any]) -> list[dict[str, Any] | None]:
        """Every property of every entity at once (the lazy entity's bulk read)."""
        return [None if entity is None else entity.materialize() for entity in objects]

    def values(self, obj: Any) -> tuple[KeyPath, dict[str, Any]]:
        return obj.key.pairs(), obj.materialize()

    def encode(self, obj: Any) -> bytes:
        return obj.to_bytes()  # type: ignore[no-any-return]
