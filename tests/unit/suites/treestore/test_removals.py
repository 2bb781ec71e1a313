"""Claim 5's two removals: what the core's diff holds and what a per-node store deletes for each.

``del /perf:cont/lst`` names every instance of a list, which has no node of
its own in the tree (nor in libyang's): the diff holds one delete per entry,
N nodes, where ``del /perf:cont`` holds one. MongoDB turns N nodes into 2N
operations and one node into 2 (why the study finds the subtree clearly
cheaper there); Redis deletes every stored record of each deleted subtree,
so both removals delete the same records, one fewer for the list.
"""

from __future__ import annotations

from stratabench.suites.treestore.dataset import Dataset
from stratabench.systems.treestore.diff import DELETE, Diff, apply_delete
from stratabench.systems.treestore.paths import parse
from stratabench.systems.treestore.records import store_plan
from stratabench.systems.treestore.schema import PERF
from stratabench.systems.treestore.tree import from_document


def _removal(path: str, n: int) -> tuple[int, int]:
    """(delete nodes in the diff, records a recursing store deletes) for removing ``path`` from E(0…n−1)."""
    tree = from_document(PERF, Dataset(n).lst_document())
    assert tree is not None
    diff = Diff(PERF)
    apply_delete(tree, parse(PERF, path), diff)
    deletes = sum(1 for op, _, _ in diff.walk() if op == DELETE)
    records = sum(1 for deleted in store_plan(diff).deletes for _ in deleted.records())
    return deletes, records


def test_removing_all_items_deletes_one_node_per_entry_and_the_same_records_as_the_subtree() -> None:
    n = 200
    assert _removal("/perf:cont/lst", n) == (n, 2 * n)        # each entry and its leaf l
    assert _removal("/perf:cont", n) == (1, 2 * n + 1)        # plus the container
