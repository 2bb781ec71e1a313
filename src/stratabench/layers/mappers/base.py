"""The mapper contract: stored entity bytes ↔ the objects of one object model.

A *mapper* (one plugin module each, registered in
:data:`stratabench.layers.mappers.MAPPERS`) is built for one kind of the
``entities`` dataset, once and outside any timed region, with everything it
can prepare ahead (model classes, contexts). Suites then time its calls:

- :meth:`Mapper.decode_many` turns a get's stored bytes into objects, keeping
  ``None`` for a missing entity in its slot;
- :meth:`Mapper.read` applies a read pattern (the first *k* properties of
  every object), because ndb and the lazy entity both defer work to reads;
- :meth:`Mapper.encode` turns one object back into stored bytes, where the
  object model can write.

Integrity is checked outside timing with :meth:`Mapper.values`, which reads
every property of an object; :meth:`Mapper.canonical_hash` hashes them in the
dataset's canonical form.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from stratabench.datasets.verify import Integrity

if TYPE_CHECKING:
    from stratabench.datasets.entities import EntitiesDataset

__all__ = ["KeyPath", "Mapper", "verify_objects"]

#: A key path as (kind, id or name) pairs, root first.
KeyPath = tuple[tuple[str, "int | str"], ...]


class Mapper(ABC):
    """Stored v1 ``Entity`` bytes ↔ one object model, for one kind.

    Parameters
    ----------
    dataset
        The kind's dataset: its kind, declared properties and flavour.
    """

    name: ClassVar[str]
    #: What the objects are, for report labels (``ndb.Model``).
    label: ClassVar[str] = ""
    #: Whether :meth:`encode` is implemented.
    can_encode: ClassVar[bool] = True

    def __init__(self, dataset: EntitiesDataset) -> None:
        self.dataset = dataset

    @abstractmethod
    def decode_many(self, blobs: Sequence[bytes | None], keys: Sequence[object] | None = None) -> list[Any]:
        """Objects for stored bytes, ``None`` where a blob is ``None``.

        ``keys``, aligned with ``blobs``, are what was asked for; errors name them.

        Raises
        ------
        DataError
            When bytes are corrupt or not an entity of this kind.
        """

    @abstractmethod
    def read(self, objects: Sequence[Any], names: Sequence[str]) -> None:
        """Read the properties ``names`` of every (non-``None``) object, as an application would."""

    @abstractmethod
    def values(self, obj: Any) -> tuple[KeyPath, dict[str, Any]]:
        """The key path and every property's Python value (reads everything)."""

    def encode(self, obj: Any) -> bytes:
        """One object → stored bytes (a serialized v1 ``Entity``)."""
        raise NotImplementedError(f"the {self.name} mapper cannot encode")

    def canonical_hash(self, objects: Sequence[Any]) -> str:
        """The dataset's canonical hash of ``objects`` (``None`` entries skipped)."""
        from stratabench.datasets.entities import canonical_hash, canonical_line

        lines = []
        for obj in objects:
            if obj is not None:
                path, values = self.values(obj)
                lines.append((path, canonical_line(path, values)))
        return canonical_hash(lines)


def verify_objects(
    mapper: Mapper, objects: Sequence[Any], expected: str, ids: Collection[int] | None = None
) -> Integrity:
    """Integrity of decoded objects against the dataset's hash, naming the first entity that differs.

    ``ids`` are the entities that should be there (default: any of the dataset's).
    """
    actual = mapper.canonical_hash(objects)
    if actual == expected:
        return Integrity(expected, actual)
    from stratabench.datasets.entities import canonical_line

    dataset = mapper.dataset
    detail = "hash differs"
    for obj in objects:
        if obj is None:
            detail = "a stored entity came back missing (None)"
            break
        path, values = mapper.values(obj)
        ident = path[-1][1]
        if not isinstance(ident, int) or ident not in (dataset.ids if ids is None else ids):
            detail = f"unexpected key {path!r}"
            break
        if canonical_line(path, values) != dataset.line(ident):
            wanted = dataset.values(ident)
            for name in sorted(set(values) | set(wanted)):
                if canonical_line(path, {name: values.get(name)}) != canonical_line(path, {name: wanted.get(name)}):
                    got, want = values.get(name), wanted.get(name)
                    detail = f"entity {path!r}: property {name!r} is {got!r}, expected {want!r}"
                    break
            break
    return Integrity(expected, actual, detail)
