"""The article dataset: one 60 KB record of prose, pure in (size, seed)."""

from __future__ import annotations

import pickle
import zlib
from datetime import timezone

from stratabench.cli.main import main
from stratabench.datasets import DATASETS, article

#: The reference hash of the default article; a generator change must change _VERSION and this.
HASH = "da99b6b552ad887454eeba2270fcc1ee506f0dc0"


def test_reference_hash() -> None:
    assert article.canonical_hash(article.generate()) == HASH
    assert article.canonical_hash(article.rows()) == HASH  # the on-disk cache serves the same


def test_pure_function_of_size_and_seed() -> None:
    assert article.generate(2, 5) == article.generate(2, 5)
    assert article.generate(1, 5) != article.generate(1, 6)
    assert article.generate(3, 5)[:1] == article.generate(1, 5)


def test_fields_have_the_spec_shapes() -> None:
    (key, title, author, created, updated, tags, text), = article.generate()
    assert key == "article-0001"
    assert 40 <= len(title) <= 80 and 5 <= len(author) <= 20
    assert created.tzinfo is timezone.utc and created <= updated < article.END
    assert 0 <= len(tags) <= 5 and len(set(tags)) == len(tags)
    assert 59_000 <= len(text) <= 60_000


def test_text_compresses_like_prose() -> None:
    value = pickle.dumps(article.generate(), pickle.HIGHEST_PROTOCOL)
    assert 55_000 <= len(value) <= 65_000
    assert 2.5 <= len(value) / len(zlib.compress(value, 6)) <= 4.0


def test_registered_with_its_hash(capsys: object) -> None:
    entry = DATASETS.get("article")()
    assert entry.schema is article.SCHEMA and (entry.default_size, entry.default_seed) == (1, 2011)
    assert entry.canonical_hash(entry.rows(1, 2011)) == article.canonical_hash(article.generate())
    assert main(["dataset", "article"]) == 0
    assert capsys.readouterr().out.strip() == article.canonical_hash(article.generate())  # type: ignore[attr-defined]
