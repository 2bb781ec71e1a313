"""ndb offline: its client, a context, the model class of each kind, and the entities dataset's encoder.

The ``ndb`` mapper (:mod:`stratabench.layers.mappers.ndb_model`), ndb's
global cache over a store and the entities study all run google-cloud-ndb
the same way: an anonymous client on project ``stratabench`` with a channel
that never connects (nothing is contacted, no gRPC thread started), a
context entered with ``use()``, and one generated model class per kind. The entities dataset's stored bytes are what ndb's own encoder
writes (docs/studies/entities.md §3); the dataset module sits a floor below
ndb and takes the encoder as an argument, so :func:`generate` here is the
dataset with ndb's bytes, the one the study and its tests use.

Needs ``google-cloud-ndb`` (extra ``entities``), imported when first used,
never at module import, so listing mappers stays cheap.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from stratabench.datasets.entities import (
    DEFAULT_SEED,
    PROJECT,
    EntitiesDataset,
    PropertyType,
    kind_name,
    property_specs,
)
from stratabench.datasets.entities import generate as generate_with
from stratabench.errors import UnavailableError

__all__ = ["NDB_ENCODER", "NdbEncoder", "generate", "ndb_class", "ndb_context"]


@functools.lru_cache(maxsize=1)
def _offline_channel_class() -> type:
    import grpc

    class OfflineChannel(grpc.Channel):  # type: ignore[misc]
        """A gRPC channel that never exists: ndb runs offline here and makes no RPC.

        ndb's client makes a real channel when created, and gRPC's first
        channel starts its core: six threads (a timer, four event-engine
        workers, a lifeguard) and 3-5 ms. Every visit that built a client paid
        that, and its threads stayed beside the cell's samples; a client
        built once in the zygote would leave those threads behind in every
        fork. This channel starts nothing, so the client can be built once,
        before the fork (the entities suite's ``warm``), and any RPC fails
        at once instead of reaching Google.
        """

        def _offline(self, *args: Any, **kwargs: Any) -> Any:
            raise UnavailableError("ndb runs offline in stratabench: no Datastore RPC is made (use a global cache "
                                   "with use_datastore=False)")

        subscribe = unsubscribe = unary_unary = unary_stream = stream_unary = stream_stream = _offline

        def close(self) -> None:
            pass

    return OfflineChannel


@functools.lru_cache(maxsize=1)
def _ndb_client() -> Any:
    try:
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import ndb
        from google.cloud.ndb import client as client_module
    except ImportError as error:  # pragma: no cover - the extra is part of the locked install
        raise UnavailableError(
            f"the entities dataset needs google-cloud-ndb ({error.name} is missing): "
            "pip install 'stratabench[entities]'"
        ) from None
    # Anonymous credentials and no channel (OfflineChannel says why): nothing is contacted, no thread started.
    # ndb's client has no option for a client without a channel; the one function that makes it is swapped for the
    # time of the call (one thread: a zygote's warm or a cell's prepare).
    helpers = client_module._helpers
    secure_channel = helpers.make_secure_channel
    helpers.make_secure_channel = lambda *args, **kwargs: _offline_channel_class()()
    try:
        return ndb.Client(project=PROJECT, credentials=AnonymousCredentials())  # type: ignore[no-untyped-call]
    finally:
        helpers.make_secure_channel = secure_channel


def ndb_context(global_cache: Any = None) -> Any:
    """A fresh ndb context on the offline client, ready for ``with context.use():``.

    ndb converts values only inside a context, even when nothing is fetched;
    a context is created once and re-entered cheaply with ``use()``.

    Parameters
    ----------
    global_cache
        An ``ndb.GlobalCache`` to read entities through (docs/studies/entities.md §4.2), or ``None``.
    """
    client = _ndb_client()
    with client.context(global_cache=global_cache, cache_policy=False) as context:
        return context


_NDB_PROPERTIES: dict[PropertyType, tuple[str, dict[str, Any]]] = {
    "text": ("TextProperty", {}),
    "string": ("StringProperty", {}),
    "integer": ("IntegerProperty", {}),
    "float": ("FloatProperty", {}),
    "boolean": ("BooleanProperty", {}),
    "datetime": ("DateTimeProperty", {}),
    "blob": ("BlobProperty", {}),
    "integers": ("IntegerProperty", {"repeated": True}),
}


@functools.lru_cache(maxsize=None)
def ndb_class(schema: str, n_props: int, flavour: str) -> Any:
    """The ndb model class of a dataset's kind, created once per process.

    ndb finds the class of a stored entity by kind name, so each class is
    named exactly as its kind and must exist before anything of that kind is
    decoded. The cache here is the one registry of generated classes: a kind
    is never defined twice in a process.
    """
    _ndb_client()
    from google.cloud import ndb

    kind = kind_name(schema, n_props, flavour)
    base = ndb.Model if flavour == "model" else ndb.Expando
    attrs: dict[str, Any] = {"__module__": __name__, "__qualname__": kind}
    if flavour != "dynamic":
        for spec in property_specs(schema, n_props):
            factory, kwargs = _NDB_PROPERTIES[spec.type]
            attrs[spec.name] = getattr(ndb, factory)(**kwargs)
    return type(kind, (base,), attrs)


class NdbEncoder:
    """ndb's encoder of the entities dataset (an :class:`stratabench.datasets.entities.Encoder`)."""

    def version(self) -> str:
        from importlib.metadata import PackageNotFoundError, version

        try:
            encoder = version("google-cloud-ndb")
        except PackageNotFoundError:
            encoder = "none"
        return f"ndb{encoder}"

    def encode(self, schema: str, n_props: int, flavour: str, rows: Sequence[Mapping[str, Any]]) -> list[bytes]:
        from google.cloud import ndb
        from google.cloud.ndb import model

        kind = kind_name(schema, n_props, flavour)
        # The dynamic flavour holds the same data, written by a class that
        # declared it (flags included); an Expando that declares nothing would
        # drop the index exclusions, which is what the encode cells show.
        writer = ndb_class(schema, n_props, "model" if flavour == "dynamic" else flavour)
        blobs = []
        with ndb_context().use():
            for ident, values in enumerate(rows, start=1):
                instance = writer(**values)
                message = model._entity_to_protobuf(instance, set_key=False)._pb
                message.key.CopyFrom(ndb.Key(kind, ident, project=PROJECT)._key.to_protobuf()._pb)
                blobs.append(bytes(message.SerializeToString()))
        return blobs


#: The one ndb encoder: a dataset's in-memory cache is keyed by it.
NDB_ENCODER = NdbEncoder()


def generate(schema: str, n_props: int, flavour: str, seed: int = DEFAULT_SEED) -> EntitiesDataset:
    """The entities dataset for these coordinates, its stored bytes written by ndb (built once, then cached).

    Raises
    ------
    UsageError
        For an unknown schema or flavour.
    UnavailableError
        When ``google-cloud-ndb`` is not installed (its encoder writes the bytes).
    """
    return generate_with(schema, n_props, flavour, seed, encoder=NDB_ENCODER)
