"""The ``ndb`` mapper: google-cloud-ndb model instances (Model, Expando, or all-dynamic Expando).

Needs ``google-cloud-ndb`` (extra ``entities``); runs offline, inside a
context of an anonymous client (no server, no credentials). Decoding is
ndb's own conversion as its read path does it (parse into the proto-plus
message, ``datastore.Entity``, then the model instance) without ndb's
framework (tasklets, batching, caches); the framework is timed separately
through ``ndb.get_multi`` and a global cache (see
:mod:`stratabench.layers.mappers.ndb_global_cache`). Which class reads a
kind is the dataset's flavour: ``ndb.Model``, ``ndb.Expando`` declaring
every property, or an ``ndb.Expando`` declaring none.

What it cannot do: it uses ndb's private converters (``model._entity_from_protobuf``
and friends), the only entry points that decode without fetching; they may
move between ndb releases.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from stratabench.errors import DataError
from stratabench.layers.mappers import MAPPERS
from stratabench.layers.mappers.base import KeyPath, Mapper

if TYPE_CHECKING:
    from stratabench.datasets.entities import EntitiesDataset

__all__ = ["NdbModelMapper"]


@MAPPERS.register("ndb", requires=("google.cloud.ndb",), extra="entities")
class NdbModelMapper(Mapper):
    """google-cloud-ndb model instances, decoded by ndb's own converter."""

    #: What creating ndb's client imports (its transport's gRPC interceptors and credentials plugin): imported once
    #: by a run's zygotes (a suite's ``preload`` names them), not in each visit that creates one (3 ms). The client
    #: itself has no real channel (ndb_toolkit's OfflineChannel), so the entities suite's ``warm`` builds it once,
    #: before the fork.
    preload = ("grpc._interceptor", "grpc._plugin_wrapping")

    def __init__(self, dataset: EntitiesDataset) -> None:
        super().__init__(dataset)
        from google.cloud import ndb
        from google.cloud.datastore_v1.types import entity as entity_pb2
        from google.cloud.ndb import model

        from stratabench.datasets.entities import PROJECT
        from stratabench.layers.mappers.ndb_toolkit import ndb_class, ndb_context

        self.model_class = ndb_class(dataset.schema, dataset.n_props, dataset.flavour)
        self.context = ndb_context()
        self._ndb = ndb
        self._model = model
        self._wrapper = entity_pb2.Entity
        self._project = PROJECT

    @property
    def label(self) -> str:  # type: ignore[override]
        return {"model": "ndb.Model", "expando": "ndb.Expando", "dynamic": "ndb.Expando (dynamic)"}[
            self.dataset.flavour
        ]

    def decode_many(self, blobs: Sequence[bytes | None], keys: Sequence[object] | None = None) -> list[Any]:
        from google.protobuf.message import DecodeError

        wrapper, convert = self._wrapper, self._model._entity_from_protobuf
        result: list[Any] = []
        with self.context.use():
            for blob in blobs:
                if blob is None:
                    result.append(None)
                    continue
                # As ndb's own lookup does with a cached entity (_datastore_api.lookup).
                message = wrapper()
                try:
                    message._pb.MergeFromString(blob)
                except DecodeError as exc:
                    raise DataError(f"stored {self.dataset.kind} bytes do not parse as a Datastore v1 Entity: {exc}") from None
                result.append(convert(message))
        return result

    def from_datastore(self, entity: Any) -> Any:
        """``datastore.Entity`` → model instance: ndb's own step alone."""
        with self.context.use():
            return self._model._entity_from_ds_entity(entity)

    def to_datastore(self, instance: Any) -> Any:
        """Model instance → ``datastore.Entity``: ndb's own step alone."""
        with self.context.use():
            return self._model._entity_to_ds_entity(instance)

    def build(self, ident: int) -> Any:
        """A fresh instance of entity ``ident`` from the dataset's values (nothing converted yet)."""
        with self.context.use():
            key = self._ndb.Key(self.dataset.kind, ident, project=self._project)
            return self.model_class(key=key, **self.dataset.values(ident))

    def read(self, objects: Sequence[Any], names: Sequence[str]) -> None:
        with self.context.use():
            for instance in objects:
                if instance is not None:
                    for name in names:
                        getattr(instance, name)

    def values(self, obj: Any) -> tuple[KeyPath, dict[str, Any]]:
        with self.context.use():
            return tuple(obj.key.pairs()), obj.to_dict()

    def encode(self, obj: Any) -> bytes:
        with self.context.use():
            return bytes(self._model._entity_to_protobuf(obj)._pb.SerializeToString())
