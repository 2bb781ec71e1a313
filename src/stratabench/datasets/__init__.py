"""Datasets: deterministic, seeded generators of records, each with a canonical hash.

Datasets that ``stratabench dataset`` can print and export register a
:class:`~stratabench.datasets.registered.DatasetEntry` subclass with
``@DATASETS.register("name")`` in a module of this package.
"""

from __future__ import annotations

from stratabench.registry import Registry

__all__ = ["DATASETS"]

DATASETS: Registry[type] = Registry("dataset", __name__)
