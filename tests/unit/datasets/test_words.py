"""Word-vocabulary text: seeded, compressible like prose, within its bounds."""

from __future__ import annotations

import random
import zlib

from stratabench.datasets.words import VOCABULARY, Words


def test_vocabulary_has_no_repeats_and_only_lower_case_words() -> None:
    assert len(set(VOCABULARY)) == len(VOCABULARY) > 400
    assert all(word.isalpha() and word.islower() for word in VOCABULARY)


def test_same_seed_same_text_other_seed_other_text() -> None:
    assert Words(random.Random(7)).text(500) == Words(random.Random(7)).text(500)
    assert Words(random.Random(7)).text(500) != Words(random.Random(8)).text(500)


def test_text_compresses_like_prose() -> None:
    text = Words(random.Random(1)).text(60_000, paragraphs=True).encode()
    assert 2.5 <= len(text) / len(zlib.compress(text, 6)) <= 4.0


def test_lengths_stay_within_their_bounds() -> None:
    words = Words(random.Random(3))
    for _ in range(200):
        assert len(words.text(300)) <= 300
        assert 40 <= len(words.phrase(40, 80)) <= 80
        assert 5 <= len(words.handle(5, 20)) <= 20
        assert 4 <= len(words.short_word(8, 4)) <= 8
