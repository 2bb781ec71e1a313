"""Latency histograms: HdrHistogram, recorded in bulk, encoded to travel, merged exactly.

Every latency the load engine takes ends in an HdrHistogram (the
``hdrhistogram`` package, ``stratabench[load]``) covering 1 ns to one hour at
three significant digits: any value is kept within 0.1%, and two histograms
of the same shape add bucket by bucket, so merging the histograms of many
clients, or of many intervals, loses nothing.

Why record in bulk: ``HdrHistogram.record_value`` costs about 4 µs in pure
Python, longer than a Redis round trip, so a client that recorded each
request as it went would measure itself. Clients keep raw nanoseconds in a
flat array while they run and :func:`histogram_of` records them afterwards:
each value is rounded down to the lowest value of its bucket (the value the
histogram would keep anyway), equal values are counted with numpy, and each
distinct bucket is recorded once with its count. The result is the same
histogram, bucket for bucket, as recording the values one by one.

Histograms travel as text: :func:`encode` gives the HdrHistogram V2 encoding
(compressed, then base64), the form HdrHistogram's other ports read too, and
the form kept in result records.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from stratabench.errors import UnavailableError

__all__ = [
    "HIGHEST_NS",
    "LatencySummary",
    "decode",
    "empty_histogram",
    "encode",
    "histogram_of",
    "merge",
    "summarize_histogram",
]

HIGHEST_NS = 3_600_000_000_000
"""The longest latency a histogram holds (one hour); longer ones are kept as one hour."""

_SIGNIFICANT_DIGITS = 3
_PERCENTILES = (50.0, 90.0, 99.0, 99.9)


def _hdr() -> Any:
    try:
        from hdrh.histogram import HdrHistogram
    except ImportError:
        raise UnavailableError(
            "latency histograms need the hdrhistogram package; install stratabench[load]"
        ) from None
    return HdrHistogram


def empty_histogram() -> Any:
    """A new histogram of the one shape every load histogram has (1 ns to 1 h, 3 digits)."""
    return _hdr()(1, HIGHEST_NS, _SIGNIFICANT_DIGITS)


def histogram_of(latencies_ns: Sequence[int] | Any) -> Any:
    """A histogram of raw latencies in nanoseconds, recorded in bulk (see the module docstring).

    Parameters
    ----------
    latencies_ns
        Non-negative integers: a list, an ``array('q')`` or a numpy array.
        Values above :data:`HIGHEST_NS` are recorded as :data:`HIGHEST_NS`.
    """
    import numpy as np

    histogram = empty_histogram()
    values = np.asarray(latencies_ns, dtype=np.int64)
    if values.size == 0:
        return histogram
    values = np.clip(values, 0, HIGHEST_NS)
    # HdrHistogram's bucket of v: bucket_index = bit_length(v | sub_bucket_mask)
    # - unit_magnitude - (sub_bucket_half_count_magnitude + 1); inside it, values
    # are told apart at a resolution of 2 ** (bucket_index + unit_magnitude).
    masked = (values | histogram.sub_bucket_mask).astype(np.float64)
    bit_length = np.frexp(masked)[1].astype(np.int64)  # exact: every value is below 2**53
    bucket_index = bit_length - histogram.unit_magnitude - (histogram.sub_bucket_half_count_magnitude + 1)
    shift = bucket_index + histogram.unit_magnitude
    lowest = (values >> shift) << shift
    distinct, counts = np.unique(lowest, return_counts=True)
    for value, count in zip(distinct.tolist(), counts.tolist(), strict=True):
        histogram.record_value(value, count)
    return histogram


def encode(histogram: Any) -> str:
    """The HdrHistogram V2 encoding of ``histogram``: compressed, base64, ASCII."""
    data: bytes = histogram.encode()
    return data.decode("ascii")


def decode(encoded: str) -> Any:
    """A histogram from :func:`encode`'s text."""
    return _hdr().decode(encoded.encode("ascii"))


def merge(encoded: Iterable[str]) -> Any:
    """One histogram holding every value of the encoded histograms: an exact sum, bucket by bucket."""
    total = empty_histogram()
    for text in encoded:
        total.add(decode(text))
    return total


@dataclass(frozen=True)
class LatencySummary:
    """The figures a load report shows, from one histogram; ``None`` when it is empty.

    Attributes
    ----------
    count
        Requests recorded.
    p50_ns, p90_ns, p99_ns, p999_ns
        Percentiles (50, 90, 99, 99.9), each the highest value equivalent to
        the recorded ones (HdrHistogram's convention), so never below the truth.
    max_ns, min_ns, mean_ns
        Of the recorded values, within the histogram's 0.1%.
    """

    count: int
    p50_ns: int | None
    p90_ns: int | None
    p99_ns: int | None
    p999_ns: int | None
    max_ns: int | None
    min_ns: int | None
    mean_ns: float | None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def summarize_histogram(histogram: Any) -> LatencySummary:
    """The :class:`LatencySummary` of ``histogram``."""
    count = int(histogram.get_total_count())
    if count == 0:
        return LatencySummary(0, None, None, None, None, None, None, None)
    values = histogram.get_percentile_to_value_dict(list(_PERCENTILES))
    p50, p90, p99, p999 = (int(values[p]) for p in _PERCENTILES)
    return LatencySummary(
        count=count,
        p50_ns=p50,
        p90_ns=p90,
        p99_ns=p99,
        p999_ns=p999,
        max_ns=int(histogram.get_max_value()),
        min_ns=int(histogram.get_min_value()),
        mean_ns=float(histogram.get_mean_value()),
    )
