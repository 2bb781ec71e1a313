"""The comments dataset: comment-sized records, pure in (size, seed)."""

from __future__ import annotations

import pickle
import statistics

from stratabench.datasets import DATASETS, comments

#: The reference hash of the default 1,000 comments; a generator change must change _VERSION and this.
HASH = "0a9e9b9079546fc68a70a99a00e75de3e7951553"


def test_reference_hash() -> None:
    assert comments.canonical_hash(comments.generate()) == HASH
    assert comments.canonical_hash(comments.rows()) == HASH


def test_pure_function_of_size_and_seed() -> None:
    assert comments.generate(20, 1) == comments.generate(20, 1)
    assert comments.generate(20, 1) != comments.generate(20, 2)


def test_fields_have_the_spec_shapes() -> None:
    rows = comments.generate(1000)
    assert [row[0] for row in rows] == list(range(1, 1001))
    assert all(1 <= row[1] <= 100 and 5 <= len(row[2]) <= 20 and -3 <= row[6] <= 12 for row in rows)
    assert 15 <= statistics.mean(len(row[3]) for row in rows) <= 25
    created = [row[4] for row in rows]
    assert created == sorted(created) and len(set(created)) == len(created)
    lengths = [len(row[5]) for row in rows]
    assert min(lengths) >= 40 and max(lengths) <= 1000
    assert 250 <= statistics.mean(lengths) <= 350 and statistics.median(lengths) < statistics.mean(lengths)
    assert 0.85 <= sum(row[7] for row in rows) / len(rows) <= 0.97


def test_the_list_is_about_400_kb_in_pickle() -> None:
    size = len(pickle.dumps(comments.generate(1000), pickle.HIGHEST_PROTOCOL))
    assert 300_000 <= size <= 450_000


def test_registered() -> None:
    entry = DATASETS.get("comments")()
    assert (entry.default_size, entry.default_seed) == (1000, 2011)
    assert entry.canonical_hash(entry.rows(10, 3)) == comments.canonical_hash(comments.generate(10, 3))
