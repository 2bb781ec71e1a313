"""Keys and geographical points of stored Datastore v1 entities, as ndb reads them.

:class:`Key` compares equal to an ndb key of the same project, namespace,
database and path, and hashes as ndb's; :class:`GeoPoint` is a stored point.
Part of the lazy entity (:mod:`stratabench.systems.lazy.entity`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from stratabench.errors import DataError
from stratabench.systems.lazy.messages import KeyMessage

__all__ = ["GeoPoint", "Key"]


class GeoPoint(NamedTuple):
    """A stored geographical point (``geo_point_value``)."""

    latitude: float
    longitude: float



class Key:
    """An immutable Datastore key: a path of (kind, id or name) pairs in a partition.

    It mirrors ndb's ``Key`` reading methods (``pairs()``, ``kind()``,
    ``id()``, ``project()``, ``namespace()``, ...) and compares equal to an
    ndb key of the same project, namespace, database and path; its hash is
    ndb's (the hash of the pairs).

    Parameters
    ----------
    pairs
        (kind, id) pairs from root to leaf; an id is an ``int`` or a ``str``
        name (``None`` for an incomplete key).
    project, namespace, database
        The partition; empty strings and ``None`` mean the default.
    """

    __slots__ = ("_database", "_namespace", "_pairs", "_project")

    def __init__(
        self, *pairs: tuple[str, int | str | None], project: str = "", namespace: str | None = None,
        database: str | None = None,
    ) -> None:
        if not pairs:
            raise ValueError("a key needs at least one (kind, id) pair")
        self._pairs = tuple((str(kind), ident) for kind, ident in pairs)
        self._project = project or ""
        self._namespace = namespace or None
        self._database = database or ""

    @classmethod
    def from_message(cls, message: Any) -> Key:
        """The key held by a v1 ``Key`` message (any class with the v1 field names)."""
        pairs = []
        for element in message.path:
            which = element.WhichOneof("id_type")
            ident = element.id if which == "id" else element.name if which == "name" else None
            pairs.append((element.kind, ident))
        if not pairs:
            raise DataError("a stored key has an empty path")
        partition = message.partition_id
        return cls(
            *pairs, project=partition.project_id, namespace=partition.namespace_id, database=partition.database_id
        )

    def to_message(self) -> Any:
        """A new v1 ``Key`` message (the project's own message class)."""
        message = KeyMessage()
        self._fill(message)
        return message

    def _fill(self, message: Any) -> None:
        if self._project:
            message.partition_id.project_id = self._project
        if self._database:
            message.partition_id.database_id = self._database
        if self._namespace:
            message.partition_id.namespace_id = self._namespace
        for kind, ident in self._pairs:
            element = message.path.add(kind=kind)
            if isinstance(ident, int):
                element.id = ident
            elif ident is not None:
                element.name = ident

    def pairs(self) -> tuple[tuple[str, int | str | None], ...]:
        """The (kind, id) pairs, root first."""
        return self._pairs

    def flat(self) -> tuple[str | int | None, ...]:
        """The pairs flattened: ``('Parent', 1, 'Child', 'x')``."""
        return tuple(part for pair in self._pairs for part in pair)

    def kind(self) -> str:
        """The leaf's kind."""
        return self._pairs[-1][0]

    def id(self) -> int | str | None:
        """The leaf's integer id or string name; ``None`` for an incomplete key."""
        return self._pairs[-1][1]

    def project(self) -> str:
        """The project (``""`` when the stored key named none)."""
        return self._project

    app = project

    def namespace(self) -> str | None:
        """The namespace, ``None`` for the default one (as ndb)."""
        return self._namespace

    def database(self) -> str:
        """The database id, ``""`` for the default one."""
        return self._database

    def parent(self) -> Key | None:
        """The key without its leaf pair, or ``None`` for a root key."""
        if len(self._pairs) == 1:
            return None
        return Key(*self._pairs[:-1], project=self._project, namespace=self._namespace, database=self._database)

    def _tuple(self) -> tuple[Any, ...]:
        return (self._project, self._namespace, self._database, self._pairs)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Key):
            return self._tuple() == other._tuple()
        # An ndb key (or any key with ndb's reading methods): ndb's own __eq__
        # returns NotImplemented for foreign keys, so Python asks us.
        try:
            theirs = (
                other.project() or "",  # type: ignore[attr-defined]
                other.namespace() or None,  # type: ignore[attr-defined]
                other.database() or "",  # type: ignore[attr-defined]
                tuple(tuple(pair) for pair in other.pairs()),  # type: ignore[attr-defined]
            )
        except (AttributeError, TypeError):
            return NotImplemented
        return self._tuple() == theirs

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self._pairs)

    def __repr__(self) -> str:
        args = [repr(part) for part in self.flat()]
        if self._namespace:
            args.append(f"namespace={self._namespace!r}")
        return f"Key({', '.join(args)})"

