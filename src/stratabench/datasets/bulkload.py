"""The bulkload dataset: n small typed records from Go's ``math/rand`` stream.

Reproduces the asset of the "GAE/Go data deserialization benchmark"
(t-yaegashi/goddbench, 2018) bit for bit: :func:`generate` draws the records
from :class:`~stratabench.datasets.gorand.GoRand` in the order of
``docs/studies/bulkload.md`` §2.6, and :func:`canonical_bytes` writes what Go's
``encoding/json`` writes for them (section 3), so :func:`canonical_hash`
matches the published hashes in :data:`REFERENCE_HASHES`.

Records hold their time as integer nanoseconds since the Unix epoch, because
``datetime`` stops at microseconds; a decode path that only yields
``datetime`` cannot pass the hash. Stdlib only.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from operator import eq, is_, itemgetter
from typing import Any, NamedTuple

from stratabench.datasets import DATASETS
from stratabench.datasets.cache import cached
from stratabench.datasets.canonical import go_json_float, go_json_string, rfc3339nano, sha1_hex
from stratabench.datasets.gorand import GoRand
from stratabench.datasets.registered import DatasetEntry
from stratabench.datasets.schema import Field, Schema

__all__ = [
    "BULKLOAD_SCHEMA",
    "DEFAULT_SEED",
    "JSON_KEYS",
    "REFERENCE_HASHES",
    "BulkRecord",
    "BulkloadDataset",
    "canonical_bytes",
    "cached_hash",
    "cached_rows",
    "canonical_hash",
    "first_difference",
    "generate",
]

BULKLOAD_SCHEMA = Schema(
    "bulkload",
    (
        Field("bool", "bool"),
        Field("int", "int"),
        Field("float", "float"),
        Field("string", "str"),
        Field("time", "time_ns"),
    ),
)
"""The five-field record of the bulkload dataset (docs/studies/bulkload.md section 1)."""


#: The seed of the reference dataset.
DEFAULT_SEED = 100

#: JSON keys of the five fields, in record (and canonical) order.
JSON_KEYS = ("bool", "int", "float", "string", "time")

#: SHA-1 of the canonical bytes, keyed by (size, seed): docs/studies/bulkload.md §3.2.
#: The 100,000-record value is the one goddbench published.
REFERENCE_HASHES: dict[tuple[int, int], str] = {
    (1, 100): "666dae3acff790b581a4d5f7b8db2d4708790bba",
    (10, 100): "69e2a61caa30fcff9ea19db1b95611ab9f84fd2a",
    (1_000, 100): "f95cc302db8529e5daabc7211c27616afbe832ba",
    (100_000, 100): "1ba1706bea3a667d765e505133e4261d1652371c",
}

_NS = 1_000_000_000
_DAY = 86_400


class BulkRecord(NamedTuple):
    """One bulkload record.

    Field names avoid shadowing builtins; :data:`JSON_KEYS` gives the JSON
    key of each position (``flag`` is ``bool``, ``number`` is ``int``,
    ``real`` is ``float``, ``text`` is ``string``, ``time_ns`` is ``time``).
    """

    #: ``bool``: about half true.
    flag: bool
    #: ``int``: uniform in [0, 2**63).
    number: int
    #: ``float``: standard normal.
    real: float
    #: ``string``: uppercase hex, 16 to 142 characters.
    text: str
    #: ``time``: nanoseconds since 1970-01-01T00:00:00Z, before 2038-01-19.
    time_ns: int


def generate(size: int, seed: int = DEFAULT_SEED) -> list[BulkRecord]:
    """Return the first ``size`` records of the dataset for ``seed``.

    A pure function of its arguments: the same records on every machine, and
    a prefix of any larger ``size``. The reference dataset is
    ``generate(100_000)``.

    Raises
    ------
    ValueError
        If ``size`` is negative.
    """
    if size < 0:
        raise ValueError(f"size must be >= 0, got {size}")
    return GoRand(seed).bulkload_records(
        size, functools.partial(tuple.__new__, BulkRecord)
    )


# -- canonical form -------------------------------------------------------

# "HH:MM:" by minute of the day and "SS" by second: indexing beats formatting.
_HOUR_MINUTE = [f"{h:02d}:{m:02d}:" for h in range(24) for m in range(60)]
_TWO_DIGITS = [f"{n:02d}" for n in range(60)]


def _time_text(value: object) -> str:
    """RFC 3339 text of a time field: int nanoseconds or a (s, ns) pair."""
    if type(value) is int:
        seconds, nanos = divmod(value, _NS)
        return rfc3339nano(seconds, nanos)
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and all(type(v) is int for v in value)
    ):
        return rfc3339nano(value[0], value[1])
    raise TypeError(
        f"expected integer nanoseconds or a (seconds, nanos) pair, got "
        f"{type(value).__name__} {_short_repr(value)}"
    )


def _field_json(index: int, value: object) -> str:
    """Canonical JSON of one field, strictly typed; TypeError otherwise."""
    if index == 0:
        if type(value) is bool:
            return "true" if value else "false"
        raise TypeError(f"expected a bool, got {type(value).__name__} {_short_repr(value)}")
    if index == 1:
        if isinstance(value, int) and not isinstance(value, bool):
            return str(int(value))
        raise TypeError(f"expected an int, got {type(value).__name__} {_short_repr(value)}")
    if index == 2:
        return go_json_float(value)  # type: ignore[arg-type]
    if index == 3:
        if isinstance(value, str):
            return go_json_string(value)
        raise TypeError(f"expected a str, got {type(value).__name__} {_short_repr(value)}")
    return f'"{_time_text(value)}"'


def _record_json(position: int, record: Sequence[object]) -> str:
    """Canonical JSON of one record, with errors naming record and field."""
    if isinstance(record, Mapping):
        raise TypeError(
            f"record {position} is a mapping; pass 5-sequences in JSON_KEYS order"
        )
    if isinstance(record, (str, bytes)) or not isinstance(record, Sequence):
        raise TypeError(
            f"record {position} is a {type(record).__name__}, not a 5-sequence"
        )
    if len(record) != 5:
        raise ValueError(f"record {position}: expected 5 fields, got {len(record)}")
    parts = []
    for index, (key, value) in enumerate(zip(JSON_KEYS, record)):
        try:
            parts.append(f'"{key}":{_field_json(index, value)}')
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"record {position} field {key!r}: {exc}") from exc
    return "{" + ",".join(parts) + "}"


def canonical_bytes(records: Iterable[Sequence[object]]) -> bytes:
    """Return the bytes Go's ``encoding/json`` Encoder writes for the records.

    A JSON array without whitespace, one object per record with keys in
    :data:`JSON_KEYS` order, then a line feed. Each record is any 5-sequence
    (bool, int, float, str, time) whose time is integer nanoseconds since
    the epoch or a (seconds, nanoseconds) pair.

    Types are checked, not coerced: a float where an int belongs, a
    ``datetime`` as the time, or 1 for ``True`` raise instead of hashing
    equal by accident.

    Raises
    ------
    TypeError
        A record or field has the wrong type; the message names them.
    ValueError
        A record does not have five fields, a float is NaN or infinite, or
        a time falls outside years 0 to 9999.
    """
    if not isinstance(records, Sequence):
        records = list(records)
    parts = _plain_parts(records)
    if parts is None:
        parts = [_record_json(position, record) for position, record in enumerate(records)]
    return ("[" + ",".join(parts) + "]\n").encode()


# Printable ASCII that Go's HTML-safe encoder writes unescaped.
_PLAIN_BYTES = bytes(c for c in range(0x20, 0x80) if chr(c) not in '"\\<>&')


class _DateTexts(dict[int, str]):
    """``YYYY-MM-DD`` by day number; a plain dict hit is the cheapest lookup."""

    def __missing__(self, days: int) -> str:
        if len(self) >= 1 << 16:
            self.clear()
        # rfc3339nano checks the year range; only the date part is kept.
        text = self[days] = rfc3339nano(days * _DAY)[:10]
        return text


_DATE_TEXTS = _DateTexts()


def _plain_parts(records: Sequence[Sequence[object]]) -> list[str] | None:
    """Record JSON for the common case, or None to take the exact slow path.

    The common case: exact types, strings that need no escaping, times in
    range. Strings are checked once for the whole column (a C-level pass);
    everything unusual is left to ``_record_json``, which also explains
    errors.
    """
    try:
        texts = "".join(map(itemgetter(3), records))
    except (TypeError, LookupError):
        return None
    if not texts.isascii() or texts.encode("ascii").translate(None, _PLAIN_BYTES):
        return None
    out: list[str] = []
    append = out.append
    dates = _DATE_TEXTS
    hour_minute = _HOUR_MINUTE
    two_digits = _TWO_DIGITS
    try:
        for flag, number, real, text, time_ns in records:
            if (
                type(number) is not int
                or type(real) is not float
                or type(time_ns) is not int
                or (flag is not True and flag is not False)
            ):
                return None
            r = repr(real)
            if "e" in r or r[-2:] == ".0" or "n" in r:
                r = go_json_float(real)
            seconds, nanos = divmod(time_ns, _NS)
            days, sod = divmod(seconds, _DAY)
            minute, second = divmod(sod, 60)
            if nanos % 10:
                frac = f".{nanos:09d}"
            elif nanos:
                frac = f".{nanos:09d}".rstrip("0")
            else:
                frac = ""
            append(
                f'{{"bool":{"true" if flag else "false"},"int":{number},'
                f'"float":{r},"string":"{text}","time":"{dates[days]}T'
                f'{hour_minute[minute]}{two_digits[second]}{frac}Z"}}'
            )
    except (TypeError, ValueError):
        # Wrong arity, NaN, a year out of range: let the slow path say so.
        return None
    return out


def canonical_hash(records: Iterable[Sequence[object]]) -> str:
    """SHA-1 hex of :func:`canonical_bytes`: the dataset's integrity hash."""
    return sha1_hex(canonical_bytes(records))


# -- diagnosis --------------------------------------------------------------

_REPR_LIMIT = 100


def _short_repr(value: object) -> str:
    text = repr(value)
    if len(text) > _REPR_LIMIT:
        return text[: _REPR_LIMIT - 3] + "..."
    return text


def _show(index: int, value: object) -> str:
    """A value for a message; times also spelled in RFC 3339."""
    if index == 4:
        try:
            return f"{_short_repr(value)} ({_time_text(value)})"
        except (TypeError, ValueError):
            pass
    return _short_repr(value)


def _canonical_field(index: int, value: object) -> str | None:
    try:
        return _field_json(index, value)
    except (TypeError, ValueError):
        return None


def first_difference(
    expected: Sequence[Sequence[object]], actual: Sequence[Sequence[object]]
) -> str | None:
    """Describe the first way ``actual`` differs from ``expected``, or None.

    Fields are compared by their canonical JSON, so two records differ
    exactly when their canonical bytes do: ``-0.0`` differs from ``0.0`` and
    ``1`` from ``True``, while integer nanoseconds equal to a (seconds,
    nanoseconds) pair do not differ.

    Returns
    -------
    str or None
        One line such as ``record 3600 field 'float': expected
        2.5686020322490677e-05, got 2.5686e-05``, or ``length mismatch:
        expected 1000 records, got 999``; None if the records are equal.
    """
    length_note = None
    if len(expected) != len(actual):
        length_note = (
            f"length mismatch: expected {len(expected)} records, got {len(actual)}"
        )
    for position, (want, got) in enumerate(zip(expected, actual)):
        if (
            len(want) == len(got) == 5
            and all(map(is_, map(type, want), map(type, got)))
            and all(map(eq, want, got))
            and (want[2] != 0 or str(want[2]) == str(got[2]))
        ):
            # Same types and equal values spell the same, except for the
            # sign of a zero float; this skips the slow check below.
            continue
        if len(got) != len(want):
            message = f"record {position}: expected {len(want)} fields, got {len(got)}"
        else:
            message = None
            for index, (key, w, g) in enumerate(zip(JSON_KEYS, want, got)):
                cw = _canonical_field(index, w)
                if cw is None or cw != _canonical_field(index, g):
                    message = (
                        f"record {position} field {key!r}: expected "
                        f"{_show(index, w)}, got {_show(index, g)}"
                    )
                    break
        if message is not None:
            if length_note is not None:
                message += f"; also {length_note}"
            return message
    return length_note


@functools.lru_cache(maxsize=2)
def cached_rows(size: int, seed: int) -> list[tuple[Any, ...]]:
    """The generated records as plain tuples, cached on disk between runs and kept in the process.

    Plain tuples: they pickle compactly and every codec takes any 5-sequence.
    Kept in the process (read-only for every caller), so the suite's zygote
    reads them once a round (:meth:`BulkloadSuite.warm`) and each forked
    worker starts with them, instead of reading the pickle again (16 ms for
    the default run's 10,000) in every visit of every cell.
    """
    return cached(f"bulkload-v1-size{size}-seed{seed}", lambda: [tuple(r) for r in generate(size, seed)])


@functools.lru_cache(maxsize=2)
def cached_hash(size: int, seed: int) -> str:
    """The canonical hash of the generated dataset (cached with it)."""
    return cached(f"bulkload-v1-size{size}-seed{seed}-hash", lambda: canonical_hash(cached_rows(size, seed)))


@DATASETS.register("bulkload")
class BulkloadDataset(DatasetEntry):
    """100,000 five-field records from Go's math/rand, seed 100 (as goddbench, 2018, loaded)."""

    default_size = 100_000
    bytes_per_record = 2_000
    default_seed = 100

    def rows(self, size: int, seed: int) -> list[tuple[Any, ...]]:
        return cached_rows(size, seed)

    def canonical_hash(self, rows: Sequence[tuple[Any, ...]]) -> str:
        return canonical_hash(rows)

    @property
    def schema(self) -> Schema:
        return BULKLOAD_SCHEMA
