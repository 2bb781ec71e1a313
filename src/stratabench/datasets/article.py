"""The ``article`` dataset: one large text record, as the cache study cached (docs/studies/cache.md §3).

A pure function of (size, seed): ``size`` articles (the study uses one),
each about 60 KB of word-vocabulary prose (:mod:`stratabench.datasets.words`),
so that zlib compresses it about 2.7×, as real text. Fields, in order:

=========== ========== ====================================================
``key``     str        ``article-0001``
``title``   str        40 to 80 characters
``author``  str        5 to 20 characters
``created`` time_us    within the ten years before 2020-01-01T00:00:00Z
``updated`` time_us    at or after ``created``, before that date
``tags``    list_str   0 to 5 distinct words of 4 to 8 letters
``text``    str        about 60,000 characters
=========== ========== ====================================================

Timestamps are whole microseconds, aware UTC ``datetime`` values. The hash
is :func:`stratabench.datasets.records_json.canonical_hash` of the rows.
Needs only the standard library.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime, timezone

from stratabench.datasets import DATASETS
from stratabench.datasets.schema import Field, Row, Schema, datetime_from_us, us_from_datetime
from stratabench.datasets.schema_dataset import SchemaDataset
from stratabench.datasets.words import Words

__all__ = ["DEFAULT_SEED", "DEFAULT_SIZE", "END", "SCHEMA", "TEXT_LENGTH", "ArticleDataset", "canonical_hash",
           "generate", "rows"]

SCHEMA = Schema(
    "article",
    (
        Field("key", "str"),
        Field("title", "str"),
        Field("author", "str"),
        Field("created", "time_us"),
        Field("updated", "time_us"),
        Field("tags", "list_str"),
        Field("text", "str"),
    ),
)
"""The article record."""

DEFAULT_SIZE = 1
DEFAULT_SEED = 2011
TEXT_LENGTH = 60_000
"""Characters of ``text``, give or take a word."""

END = datetime(2020, 1, 1, tzinfo=timezone.utc)
"""Every timestamp is before this fixed instant (never "now": the data must not depend on the day)."""

_TEN_YEARS_US = 3653 * 86_400 * 1_000_000


def generate(size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED) -> list[Row]:
    """``size`` article rows for ``seed``; the same arguments give the same rows everywhere."""
    words = Words(random.Random(seed))
    end_us = us_from_datetime(END)
    out: list[Row] = []
    for index in range(size):
        created = end_us - 1 - int(words.uniform(0, _TEN_YEARS_US))
        updated = created + int(words.uniform(0, end_us - created))
        tags: list[str] = []
        for _ in range(words.integer(0, 5)):
            tag = words.short_word(8, 4)
            if tag not in tags:
                tags.append(tag)
        out.append((
            f"article-{index + 1:04d}",
            words.phrase(40, 80),
            words.handle(5, 20),
            datetime_from_us(created),
            datetime_from_us(updated),
            tags,
            words.text(TEXT_LENGTH, paragraphs=True),
        ))  # fmt: skip
    return out


@DATASETS.register("article")
class ArticleDataset(SchemaDataset):
    """One article of about 60 KB of prose, seed 2011 (as the 2011 caching article cached)."""

    record_schema = SCHEMA
    generator = staticmethod(generate)
    version = 2  # bump whenever generate's output changes (and the reference hash in the tests)
    default_size = DEFAULT_SIZE
    bytes_per_record = 160_000
    default_seed = DEFAULT_SEED


def rows(size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED) -> list[Row]:
    """:func:`generate`, kept in the on-disk dataset cache for the run's worker processes."""
    return ArticleDataset().rows(size, seed)


def canonical_hash(records: Sequence[Row]) -> str:
    """The integrity hash of article rows."""
    return ArticleDataset().canonical_hash(records)
