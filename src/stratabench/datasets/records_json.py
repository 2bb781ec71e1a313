"""The canonical form of schema rows: one compact JSON object per line, keys sorted.

Used by the cache study's datasets (``article``, ``comments``) and by the
user's own records (:mod:`stratabench.datasets.userfile`), so that any
records, generated or loaded, have one hash: the SHA-1
(:func:`~stratabench.datasets.canonical.sha1_hex`) of

- one line per record, in order, each ending with ``\\n``;
- each line the record as a JSON object with sorted keys, no spaces
  (``separators=(",", ":")``), non-ASCII text as UTF-8 (lone surrogates
  kept with ``surrogatepass``), NaN and infinities refused;
- ``time_us`` values spelled as RFC 3339 in UTC with up to six fraction
  digits (:func:`~stratabench.datasets.canonical.rfc3339nano`);
- other values as JSON spells them, so ``1``, ``1.0`` and ``true`` differ.

Every value is checked against its field's type first (an ``int`` field
holding ``True`` or ``1.0``, a ``time_us`` field holding a string, is an
error, not a hash), so a decoder that changes a type cannot pass.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime

from stratabench.datasets.canonical import rfc3339nano, sha1_hex
from stratabench.datasets.schema import Row, Schema, us_from_datetime

__all__ = ["canonical_lines", "canonical_hash", "hasher"]

_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _time(value: object) -> str:
    if type(value) is not datetime or value.tzinfo is None:
        raise TypeError(f"expected an aware datetime, got {type(value).__name__} {value!r}")
    seconds, micros = divmod(us_from_datetime(value), 1_000_000)
    return rfc3339nano(seconds, micros * 1000)


def _checked(kind: type) -> Callable[[object], object]:
    def check(value: object) -> object:
        if type(value) is not kind:
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__} {value!r}")
        return value

    return check


def _list_of(kind: type) -> Callable[[object], object]:
    item = _checked(kind)

    def check(value: object) -> object:
        if type(value) is not list:
            raise TypeError(f"expected a list, got {type(value).__name__} {value!r}")
        for element in value:
            item(element)
        return value

    return check


def _any(value: object) -> object:
    return value  # the JSON encoder refuses what is not a JSON value


_SPELLERS: dict[str, Callable[[object], object]] = {
    "bool": _checked(bool),
    "int": _checked(int),
    "float": _checked(float),
    "str": _checked(str),
    "time_us": _time,
    "list_str": _list_of(str),
    "list_int": _list_of(int),
    "any": _any,
}


def canonical_lines(schema: Schema, rows: Sequence[Row], keys: Sequence[str] | None = None) -> bytes:
    """The canonical bytes of ``rows`` (see the module docstring).

    Parameters
    ----------
    schema
        The rows' schema; its field types say how each value is checked and spelled.
    rows
        Tuples in field order.
    keys
        The JSON key of each field; the field names by default (a user's
        file keeps its own keys, which need not be identifiers).

    Raises
    ------
    TypeError, ValueError
        When a value does not have its field's type, or is not a JSON value.
    """
    names = tuple(schema.names if keys is None else keys)
    spellers = []
    for field in schema.fields:
        speller = _SPELLERS.get(field.type)
        if speller is None:
            raise ValueError(f"field {field.name!r}: type {field.type} has no canonical JSON form here")
        spellers.append(speller)
    pairs = list(zip(names, spellers))
    width = len(pairs)
    encode = _ENCODER.encode
    out = []
    for row in rows:
        if len(row) != width:
            raise ValueError(f"expected {width} fields, got {len(row)}")
        out.append(encode({name: spell(value) for (name, spell), value in zip(pairs, row)}))
        out.append("\n")
    return "".join(out).encode("utf-8", "surrogatepass")


def canonical_hash(schema: Schema, rows: Sequence[Row], keys: Sequence[str] | None = None) -> str:
    """SHA-1 of :func:`canonical_lines`: the integrity hash of these rows."""
    return sha1_hex(canonical_lines(schema, rows, keys))


def hasher(schema: Schema, keys: Sequence[str] | None = None) -> Callable[[Sequence[Row]], str]:
    """``canonical_hash`` bound to a schema: the ``hash_rows`` of :func:`~stratabench.layers.codecs.base.verify_rows`."""

    def hash_rows(rows: Sequence[Row]) -> str:
        return canonical_hash(schema, rows, keys)

    return hash_rows
