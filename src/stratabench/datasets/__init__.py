"""Datasets: deterministic, seeded generators of records, each with a canonical hash.

Datasets that ``stratabench dataset`` can print and export register a
:class:`~stratabench.datasets.registered.DatasetEntry` subclass with
``@DATASETS.register("name")`` in a module of this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stratabench.registry import Registry

if TYPE_CHECKING:
    from stratabench.datasets.registered import DatasetEntry

__all__ = ["DATASETS"]

DATASETS: Registry[type[DatasetEntry]] = Registry("dataset", __name__)
