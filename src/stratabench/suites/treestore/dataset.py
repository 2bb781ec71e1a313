"""The study's generated data (docs/studies/treestore.md §3): entries, the target item, the selectors and expected hashes."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from stratabench.systems.treestore import json_codec

__all__ = ["Dataset", "document_hash"]


def document_hash(document: Any) -> str:
    """SHA-1 of the compact JSON of a canonical document (docs/studies/treestore.md §3.3)."""
    return hashlib.sha1(json_codec.dumps(document)).hexdigest()


def entries(n: int) -> list[dict[str, Any]]:
    """E(0…N−1), the ``lst`` entries, in canonical order."""
    return [{"k1": i, "k2": f"str{i}", "l": f"l{i}"} for i in range(n)]


@dataclass(frozen=True)
class Dataset:
    """Size N, the middle index M and everything the tests address."""

    n: int

    @property
    def m(self) -> int:
        return self.n // 2

    @property
    def p_m(self) -> str:
        """The exact path of the target item, the leaf ``l`` of E(M)."""
        return f"/perf:cont/lst[k1='{self.m}'][k2='str{self.m}']/l"

    @property
    def f_m(self) -> str:
        """The filter that selects the same leaf (one predicate joined with ``and``)."""
        return f"/perf:cont/lst[k1='{self.m}' and k2='str{self.m}']/l"

    @property
    def bulk_timeout(self) -> float:
        """Subscriber timeout of bulk commits: N × 100 ms."""
        return max(self.n * 0.1, 5.0)

    def lst_document(self) -> dict[str, Any]:
        return {"perf:cont": {"lst": entries(self.n)}}

    def usr_document(self) -> dict[str, Any]:
        return {"perf:cont": {"usr-lst": [{"k": i, "l": f"l{i}"} for i in range(self.n)]}}

    def with_target(self, value: str | None) -> dict[str, Any]:
        """The full ``lst`` document with the target leaf set to ``value`` (removed for ``None``)."""
        document = self.lst_document()
        target = document["perf:cont"]["lst"][self.m]
        if value is None:
            del target["l"]
        else:
            target["l"] = value
        return document

    @cached_property
    def hashes(self) -> dict[str, str]:
        """Expected hashes of every state and result the tests check."""
        m = self.m
        return {
            "lst": document_hash(self.lst_document()),
            "usr": document_hash(self.usr_document()),
            "target entry": document_hash({"perf:cont": {"lst": [{"k1": m, "k2": f"str{m}", "l": f"l{m}"}]}}),
            "target value": document_hash(f"l{m}"),
            "created": document_hash(self.with_target("l0")),
            "modified": document_hash(self.with_target("l1")),
            "removed": document_hash(self.with_target(None)),
            "empty cont": document_hash({"perf:cont": {}}),
            "empty": document_hash({}),
        }
