from __future__ import annotations

import random

import pytest

from stratabench.load.histogram import HIGHEST_NS, decode, empty_histogram, encode, histogram_of, merge, summarize_histogram


def one_by_one(values: list[int]) -> object:
    histogram = empty_histogram()
    for value in values:
        histogram.record_value(min(value, HIGHEST_NS))
    return histogram


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bulk_recording_gives_the_same_buckets_as_recording_one_by_one(seed: int) -> None:
    rng = random.Random(seed)
    values = [int(rng.lognormvariate(11, 3)) for _ in range(5000)]
    values += [0, 1, 2047, 2048, 2049, 4095, 4096, 1 << 40, HIGHEST_NS, HIGHEST_NS + 12345]
    assert histogram_of(values).equals(one_by_one(values))


def test_encoding_travels_and_comes_back_equal() -> None:
    histogram = histogram_of([100, 200, 300, 40_000, 5_000_000])
    text = encode(histogram)
    assert text.isascii() and "\n" not in text
    assert decode(text).equals(histogram)


def test_merged_histogram_is_the_union_of_its_parts() -> None:
    rng = random.Random(7)
    parts = [[int(rng.expovariate(1 / (20_000 * (k + 1)))) for _ in range(3000 + 500 * k)] for k in range(4)]
    merged = merge(encode(histogram_of(part)) for part in parts)
    union = histogram_of([value for part in parts for value in part])
    assert merged.equals(union)
    assert merged.get_total_count() == sum(len(part) for part in parts)
    assert summarize_histogram(merged) == summarize_histogram(union)


def test_summary_of_known_values_and_of_nothing() -> None:
    summary = summarize_histogram(histogram_of(list(range(1, 1001))))
    assert (summary.count, summary.p50_ns, summary.p90_ns, summary.p99_ns, summary.p999_ns, summary.max_ns) == (
        1000, 500, 900, 990, 999, 1000)
    empty = summarize_histogram(histogram_of([]))
    assert empty.count == 0 and empty.p99_ns is None and empty.max_ns is None
