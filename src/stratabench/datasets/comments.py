"""The ``comments`` dataset: a list of comment-sized records (docs/studies/cache.md §3).

A pure function of (size, seed); the study caches 1,000 of them as one
entry. Fields, in order:

============ ======== =====================================================
``id``       int      1 … size
``post_id``  int      1 … 100, the article the comment belongs to
``author``   str      5 to 20 characters
``email``    str      about 20 characters
``created``  time_us  increasing through the list, from 2019-01-01Z on
``text``     str      40 to 1,000 characters, mean about 300, most short
``score``    int      small and signed, -3 … 12
``approved`` bool     true 92% of the time
============ ======== =====================================================

About 350–450 bytes per record, roughly 0.4 MB for 1,000 in pickle. Text
is word-vocabulary prose (:mod:`stratabench.datasets.words`). The hash is
:func:`stratabench.datasets.records_json.canonical_hash` of the rows. Needs
only the standard library.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from datetime import datetime, timezone

from stratabench.datasets import DATASETS
from stratabench.datasets.schema import Field, Row, Schema, datetime_from_us, us_from_datetime
from stratabench.datasets.schema_dataset import SchemaDataset
from stratabench.datasets.words import Words

__all__ = ["DEFAULT_SEED", "DEFAULT_SIZE", "SCHEMA", "CommentsDataset", "canonical_hash", "generate", "rows"]

SCHEMA = Schema(
    "comment",
    (
        Field("id", "int"),
        Field("post_id", "int"),
        Field("author", "str"),
        Field("email", "str"),
        Field("created", "time_us"),
        Field("text", "str"),
        Field("score", "int"),
        Field("approved", "bool"),
    ),
)
"""The comment record."""

DEFAULT_SIZE = 1000
DEFAULT_SEED = 2011

_START = datetime(2019, 1, 1, tzinfo=timezone.utc)
_DOMAINS = ("example.com", "mail.test", "post.example", "inbox.test")
_MIN_TEXT, _MAX_TEXT = 40, 1000
# Exponential lengths above the minimum, mean 260 before the cap: a mean
# near 300 characters with most comments short, as on real sites.
_TEXT_SCALE = 260.0
_MEAN_GAP_US = 3_600_000_000  # an hour between comments, on average


def generate(size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED) -> list[Row]:
    """``size`` comment rows for ``seed``; the same arguments give the same rows everywhere."""
    words = Words(random.Random(seed))
    created = us_from_datetime(_START)
    out: list[Row] = []
    for index in range(size):
        created += 1 + int(-_MEAN_GAP_US * math.log(1.0 - words.uniform(0.0, 1.0)))
        author = words.handle(5, 20)
        handle = words.handle(6, 10)
        email = f"{handle}@{_DOMAINS[words.integer(0, len(_DOMAINS) - 1)]}"
        length = _MIN_TEXT + int(-_TEXT_SCALE * math.log(1.0 - words.uniform(0.0, 1.0)))
        text = words.text(min(length, _MAX_TEXT))
        while len(text) < _MIN_TEXT:  # a cut at a word boundary can fall below the minimum
            text += " " + words.word()
        out.append((
            index + 1,
            words.integer(1, 100),
            author,
            email,
            datetime_from_us(created),
            text,
            words.integer(-3, 12),
            words.chance(0.92),
        ))  # fmt: skip
    return out


@DATASETS.register("comments")
class CommentsDataset(SchemaDataset):
    """1,000 comment-sized records of prose, seed 2011 (as the 2011 caching article listed)."""

    record_schema = SCHEMA
    generator = staticmethod(generate)
    version = 2  # bump whenever generate's output changes (and the reference hash in the tests)
    default_size = DEFAULT_SIZE
    bytes_per_record = 3_000
    default_seed = DEFAULT_SEED


def rows(size: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED) -> list[Row]:
    """:func:`generate`, kept in the on-disk dataset cache for the run's worker processes."""
    return CommentsDataset().rows(size, seed)


def canonical_hash(records: Sequence[Row]) -> str:
    """The integrity hash of comments rows."""
    return CommentsDataset().canonical_hash(records)
