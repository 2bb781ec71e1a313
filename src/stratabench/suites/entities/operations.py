"""The entities suite's operations: what each cell times, and how it is checked.

Three families (docs/studies/entities.md §5), each built inside the worker from a
cell's parameters:

- :func:`get_operation` — ``get20``: the store's multi-get of the 20 keys
  of the get set, then one path (``bytes``, ``message``, ``datastore``,
  ``ndb.decode``, ``lazy``, or ``ndb.get`` through ndb's global cache) and a
  read pattern on every returned object;
- :func:`decode_operation` — one step from bytes towards objects, on the
  get set's bytes held in memory;
- :func:`encode_operation` — one step from objects back to bytes.

Every operation is verified once, outside timing: read cells hash what they
produced (every property read) against the dataset; write cells decode their
bytes with the reference decoder and hash them, and compare index flags with
the kind's fingerprint, noting (not failing) a change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from stratabench.datasets import entities as E
from stratabench.datasets.verify import Integrity
from stratabench.engine.operation import Operation
from stratabench.errors import UsageError
from stratabench.layers.mappers.base import Mapper, verify_objects
from stratabench.layers.stores.base import batch_getter

__all__ = [
    "ALLOC_NOTE",
    "DECODE_STEPS",
    "ENCODE_STEPS",
    "GET_PATHS",
    "READS",
    "decode_operation",
    "encode_operation",
    "get_operation",
    "read_names",
]

#: get20 paths, in table order.
GET_PATHS = ("bytes", "message", "datastore", "ndb.get", "ndb.decode", "lazy")
#: Read patterns: properties read on every object after the get (``materialize``/``dict``: everything at once).
READS = ("0", "1", "10", "all", "materialize", "dict")
#: decode steps, in table order.
DECODE_STEPS = (
    "message",
    "message.reuse",
    "datastore",
    "datastore.from_message",
    "ndb.from_datastore",
    "ndb",
    "lazy",
    "lazy.defer",
)
#: encode steps, in table order.
ENCODE_STEPS = (
    "message.serialize",
    "datastore.to_message",
    "datastore.to_bytes",
    "ndb.to_datastore",
    "ndb.build",
    "ndb.build+encode",
    "ndb.encode",
    "lazy.unmodified",
    "lazy.changed",
    "lazy.encode",
)
#: Said on every cell whose objects live partly in upb's arena (docs/studies/entities.md §8).
ALLOC_NOTE = "alloc_bytes omits upb's arena (parsed messages): tracemalloc sees only Python objects"


def read_names(dataset: E.EntitiesDataset, read: str) -> list[str]:
    """The property names a read pattern reads, in index order."""
    names = list(dataset.property_names)
    if read == "0":
        return []
    if read in ("all", "materialize", "dict"):
        return names
    try:
        return names[: int(read)]
    except ValueError:
        raise UsageError(f"unknown read pattern {read!r}; use {', '.join(READS)}") from None


def _mapper(name: str, dataset: E.EntitiesDataset, **kwargs: Any) -> Mapper:
    from stratabench.layers.mappers import MAPPERS

    mapper: Mapper = MAPPERS.get(name)(dataset, **kwargs)
    return mapper


def _object_checker(mapper: Mapper, expected: str, ids: Sequence[int] | None = None) -> Callable[[object], Integrity]:
    wanted = mapper.dataset.get_ids if ids is None else ids

    def verify(result: object) -> Integrity:
        objects = result[0] if isinstance(result, tuple) else result
        if not isinstance(objects, list):
            objects = [objects]  # one reused message
        return verify_objects(mapper, objects, expected, wanted)

    return verify


def _bytes_checker(dataset: E.EntitiesDataset, expected: str) -> Callable[[object], Integrity]:
    reference = _mapper("protobuf", dataset)

    def verify(result: object) -> Integrity:
        blobs: list[Any] = result if isinstance(result, list) else [result]
        return verify_objects(reference, reference.decode_many(blobs), expected, dataset.get_ids)

    return verify


def _flags_note(dataset: E.EntitiesDataset, blobs: Sequence[bytes]) -> str:
    """``kept``, or which properties' index flags differ from the kind's fingerprint."""
    from stratabench.systems.lazy.messages import EntityMessage

    changed: set[str] = set()
    for blob in blobs:
        flags = E.flags_of_message(EntityMessage.FromString(blob))
        changed |= {name for name, indexed in flags.items() if dataset.fingerprint.get(name) != indexed}
    if not changed:
        return "kept"
    now = sorted(changed)
    shown = ", ".join(now[:4]) + (f" and {len(now) - 4} more" if len(now) > 4 else "")
    return f"index flags changed: {shown}"


# --- get20 ---------------------------------------------------------------------------------------


def get_operation(
    dataset: E.EntitiesDataset, path: str, read: str, store: Any, *, global_cache: Any = None
) -> Operation:
    """One ``get20`` cell on an open store that already holds the dataset.

    Parameters
    ----------
    dataset
        The kind's dataset (the model kind for flavour-independent paths).
    path
        One of :data:`GET_PATHS`.
    read
        One of :data:`READS`.
    store
        The project store, holding every entity under its global-cache key.
    global_cache
        For ``ndb.get``: the ``ndb.GlobalCache`` to read through (default:
        the adapter over ``store``).
    """
    keys = dataset.get_keys
    names = read_names(dataset, read)
    get_many = batch_getter(store)
    expected = dataset.get_hash
    notes: dict[str, Any] = {"keys": len(keys), "properties read": len(names)}
    if path == "bytes":
        if read != "0":
            raise UsageError("the bytes path reads no properties; use read 0")

        def fetch() -> list[bytes | None]:
            return get_many(keys)

        return Operation(call=fetch, verify=_bytes_checker(dataset, expected), notes=notes)
    if path == "ndb.get":
        return _ndb_get_operation(dataset, names, store, global_cache, notes)
    mapper = _mapper({"message": "protobuf", "ndb.decode": "ndb"}.get(path, path), dataset)
    decode, apply = mapper.decode_many, mapper.read
    call: Callable[[], object]
    if read == "materialize":
        if path != "lazy":
            raise UsageError("read materialize is the lazy entity's bulk read; use lazy")
        materialize = mapper.materialize  # type: ignore[attr-defined]

        def call() -> object:
            objects = decode(get_many(keys), keys)
            return objects, materialize(objects)

    elif read == "dict":
        if path != "message":
            raise UsageError("read dict is the plain dict built from a parsed message; use message")
        to_dict = mapper.to_dict  # type: ignore[attr-defined]

        def call() -> object:
            messages = decode(get_many(keys), keys)
            return messages, [to_dict(message) for message in messages]

    elif names:

        def call() -> object:
            objects = decode(get_many(keys), keys)
            apply(objects, names)
            return objects

    else:

        def call() -> object:
            return decode(get_many(keys), keys)

    if path in ("message", "lazy", "datastore", "ndb.decode"):
        notes["alloc_bytes"] = ALLOC_NOTE
    return Operation(call=call, verify=_object_checker(mapper, expected), notes=notes)


def _ndb_get_operation(
    dataset: E.EntitiesDataset, names: list[str], store: Any, global_cache: Any, notes: dict[str, Any]
) -> Operation:
    from google.cloud import ndb

    from stratabench.layers.mappers.ndb_global_cache import store_global_cache
    from stratabench.layers.mappers.ndb_toolkit import ndb_context

    mapper = _mapper("ndb", dataset)
    cache = global_cache if global_cache is not None else store_global_cache(store)
    context = ndb_context(global_cache=cache)
    with context.use():
        keys = [ndb.Key(dataset.kind, ident) for ident in dataset.get_ids]
    get_multi, use = ndb.get_multi, context.use
    apply = mapper.read

    def call() -> object:
        with use():
            objects = get_multi(keys, use_cache=False, use_datastore=False)
        if names:
            apply(objects, names)
        return objects

    notes["ndb"] = "get_multi(use_cache=False, use_datastore=False) through a global cache"
    return Operation(call=call, verify=_object_checker(mapper, dataset.get_hash), notes=notes)


# --- decode steps --------------------------------------------------------------------------------


def decode_operation(dataset: E.EntitiesDataset, step: str, read: str) -> Operation:
    """One ``decode`` cell: a step from the get set's bytes (held in memory) towards objects."""
    blobs = dataset.get_blobs
    keys = dataset.get_keys
    expected = dataset.get_hash
    names = read_names(dataset, read)
    notes: dict[str, Any] = {"alloc_bytes": ALLOC_NOTE}
    call: Callable[[], object]
    if step == "message.reuse":
        protobuf = _mapper("protobuf", dataset)
        message = protobuf.message_class()  # type: ignore[attr-defined]
        clear, merge = message.Clear, message.MergeFromString

        def call() -> object:
            for blob in blobs:
                clear()
                merge(blob)
            return message

        last = dataset.get_ids[-1]
        notes["verified"] = "the last entity (the message is reused for each)"
        return Operation(call=call, verify=_object_checker(protobuf, dataset.hash_of([last]), [last]), notes=notes)
    if step == "datastore.from_message":
        datastore = _mapper("datastore", dataset)
        messages = [datastore.message_class.FromString(blob) for blob in blobs]  # type: ignore[attr-defined]
        convert = datastore.from_message  # type: ignore[attr-defined]

        def call() -> object:
            return [convert(message) for message in messages]

        return Operation(call=call, verify=_object_checker(datastore, expected), notes=notes)
    if step == "ndb.from_datastore":
        ndb_mapper = _mapper("ndb", dataset)
        entities = _mapper("datastore", dataset).decode_many(blobs)
        from_datastore = ndb_mapper.from_datastore  # type: ignore[attr-defined]

        def call() -> object:
            return [from_datastore(entity) for entity in entities]

        return Operation(call=call, verify=_object_checker(ndb_mapper, expected), notes=notes)
    mapper_name = {"message": "protobuf", "lazy.defer": "lazy"}.get(step, step)
    kwargs = {"defer": True} if step == "lazy.defer" else {}
    mapper = _mapper(mapper_name, dataset, **kwargs)
    decode, apply = mapper.decode_many, mapper.read
    if step == "lazy" and read == "materialize":
        materialize = mapper.materialize  # type: ignore[attr-defined]

        def call() -> object:
            objects = decode(blobs, keys)
            return objects, materialize(objects)

    elif names:

        def call() -> object:
            objects = decode(blobs, keys)
            apply(objects, names)
            return objects

    else:

        def call() -> object:
            return decode(blobs, keys)

    return Operation(call=call, verify=_object_checker(mapper, expected), notes=notes)


# --- encode steps --------------------------------------------------------------------------------


def encode_operation(dataset: E.EntitiesDataset, step: str, workdir: Path) -> Operation:
    """One ``encode`` cell: a step from objects (decoded from the get set) back to bytes."""
    blobs = dataset.get_blobs
    expected = dataset.get_hash
    check_bytes = _bytes_checker(dataset, expected)
    notes: dict[str, Any] = {}
    call: Callable[[], object]
    verify: Callable[[object], Integrity] = check_bytes
    if step == "message.serialize":
        messages = _mapper("protobuf", dataset).decode_many(blobs)

        def call() -> object:
            return [message.SerializeToString() for message in messages]

    elif step in ("datastore.to_message", "datastore.to_bytes"):
        datastore = _mapper("datastore", dataset)
        entities = datastore.decode_many(blobs)
        to_message = datastore.to_message  # type: ignore[attr-defined]
        if step == "datastore.to_message":

            def call() -> object:
                return [to_message(entity) for entity in entities]

            def verify(result: object) -> Integrity:
                return check_bytes([message._pb.SerializeToString() for message in result])  # type: ignore[attr-defined]

        else:
            encode = datastore.encode

            def call() -> object:
                return [encode(entity) for entity in entities]

    elif step.startswith("ndb."):
        call, verify = _ndb_encode_step(dataset, step, check_bytes, notes)
    elif step in ("lazy.unmodified", "lazy.changed"):
        lazy = _mapper("lazy", dataset)
        entities = lazy.decode_many(blobs)
        if step == "lazy.unmodified":

            def call() -> object:
                return [entity.to_bytes() for entity in entities]

        else:
            # The first property is assigned its own value: the entity is
            # modified (re-encoded) while the data stays the dataset's.
            name = dataset.property_names[0]
            values = [getattr(entity, name) for entity in entities]
            pairs = list(zip(entities, values))

            def call() -> object:
                out = []
                for entity, value in pairs:
                    setattr(entity, name, value)
                    out.append(entity.to_bytes())
                return out

            notes["changed"] = f"{name} reassigned on every entity"
    elif step == "lazy.encode":
        from stratabench.systems.lazy import Key

        cls = _mapper("lazy", dataset).entity_class  # type: ignore[attr-defined]
        items = [(Key((dataset.kind, ident), project=E.PROJECT), dataset.values(ident)) for ident in dataset.get_ids]
        encode_values = cls.encode

        def call() -> object:
            return [encode_values(key, values) for key, values in items]

    else:
        raise UsageError(f"unknown encode step {step!r}; use {', '.join(ENCODE_STEPS)}")
    produced = call()
    if step not in ("datastore.to_message", "ndb.to_datastore", "ndb.build"):
        notes["index flags"] = _flags_note(dataset, produced)  # type: ignore[arg-type]
    return Operation(call=call, verify=verify, notes=notes)


def _ndb_encode_step(
    dataset: E.EntitiesDataset, step: str, check_bytes: Callable[[object], Integrity], notes: dict[str, Any]
) -> tuple[Callable[[], object], Callable[[object], Integrity]]:
    ndb_mapper = _mapper("ndb", dataset)
    build = ndb_mapper.build  # type: ignore[attr-defined]
    encode = ndb_mapper.encode
    ids = dataset.get_ids
    check_objects = _object_checker(ndb_mapper, dataset.get_hash)
    if step == "ndb.build":
        notes["ndb"] = "instances built from plain values (subtract from ndb.build+encode)"

        def call() -> object:
            return [build(ident) for ident in ids]

        return call, check_objects
    if step == "ndb.build+encode":
        notes["ndb"] = "fresh instances: built from values, then encoded (ndb converts every value)"

        def call() -> object:
            return [encode(build(ident)) for ident in ids]

        return call, check_bytes
    # Decoded instances that have been encoded once: ndb keeps converted
    # values inside the instance, so this is its steady state.
    instances = ndb_mapper.decode_many(dataset.get_blobs)
    if step == "ndb.encode":
        # Its first encode is encode_operation's own call for the index flags'
        # note, before any sample: a pass here as well cost 20-25 ms a visit.
        notes["ndb"] = "decoded instances, encoded before (ndb's cached conversions)"

        def call() -> object:
            return [encode(instance) for instance in instances]

        return call, check_bytes
    for instance in instances:
        encode(instance)
    if step == "ndb.to_datastore":
        to_datastore = ndb_mapper.to_datastore  # type: ignore[attr-defined]
        datastore = _mapper("datastore", dataset)

        def call() -> object:
            return [to_datastore(instance) for instance in instances]

        def verify(result: object) -> Integrity:
            return check_bytes([datastore.encode(entity) for entity in result])  # type: ignore[attr-defined]

        return call, verify
    raise UsageError(f"unknown encode step {step!r}; use {', '.join(ENCODE_STEPS)}")
