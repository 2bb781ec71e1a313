"""A registered dataset made by a generator function and hashed in the canonical JSON-lines form.

The cache study's datasets (``article``, ``comments``) are each a schema, a
pure generator ``generate(size, seed)`` and the hash of
:mod:`stratabench.datasets.records_json`. :class:`SchemaDataset` turns
that into what ``stratabench dataset NAME`` and the suites use, and keeps
the generated rows in the on-disk dataset cache
(:func:`stratabench.datasets.cache.cached`) under the dataset's name and
generator version, so that every worker process of a run generates them
at most once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from stratabench.datasets.cache import cached
from stratabench.datasets.records_json import canonical_hash
from stratabench.datasets.registered import DatasetEntry
from stratabench.datasets.schema import Row, Schema

__all__ = ["SchemaDataset"]


class SchemaDataset(DatasetEntry):
    """A dataset of ``SCHEMA`` rows from ``generator``, registered by its subclass.

    Subclasses set :attr:`record_schema`, :attr:`generator`, :attr:`version`
    (bump it whenever the generator's output changes, so the cache never
    serves old rows), :attr:`default_size` and :attr:`default_seed`.
    """

    record_schema: ClassVar[Schema]
    generator: ClassVar[Callable[[int, int], list[Row]]]
    version: ClassVar[int]

    def rows(self, size: int, seed: int) -> list[tuple[Any, ...]]:
        generate = type(self).generator
        return cached(f"{self.name}-v{self.version}-size{size}-seed{seed}", lambda: generate(size, seed))

    def canonical_hash(self, rows: Sequence[tuple[Any, ...]]) -> str:
        return canonical_hash(self.record_schema, rows)

    @property
    def schema(self) -> Schema:
        return self.record_schema
