"""Datasets as the CLI sees them: rows, a schema and a canonical hash.

Each registered entry is a small adapter over a dataset module; the
generator and canonical form stay in that module.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from stratabench.datasets.schema import Schema

__all__ = ["DatasetEntry"]


class DatasetEntry(ABC):
    """A dataset ``stratabench dataset NAME`` can hash and export."""

    name: ClassVar[str]
    default_size: ClassVar[int]
    bytes_per_record: ClassVar[int]
    """Memory one generated record takes in a Python process, rounded up from
    the peak tracemalloc sees while generating a few MB of records into an
    empty dataset cache (``tests/unit/datasets`` checks it), so ``--size``
    can be refused before a run that cannot fit."""
    default_seed: ClassVar[int]

    @abstractmethod
    def rows(self, size: int, seed: int) -> list[tuple[Any, ...]]:
        """The records as canonical rows (tuples in schema order)."""

    @abstractmethod
    def canonical_hash(self, rows: Sequence[tuple[Any, ...]]) -> str:
        """SHA-1 of the canonical form of ``rows``."""

    @property
    @abstractmethod
    def schema(self) -> Schema:
        """The record schema codecs export with."""
