"""How records travel as JSON text, shared by every JSON codec.

The wire is the one Go's ``encoding/json`` writes for the bulkload records
(docs/studies/bulkload.md section 3): a list of objects keyed by field name, with

- ``time_ns`` and ``time_us`` as RFC 3339 strings with up to nine fraction
  digits (Go's ``RFC3339Nano``), always UTC with ``Z``;
- ``bytes`` as standard base64 with padding (Go's ``[]byte``);
- everything else as the JSON value itself.

So the ``json``, ``orjson`` and ``msgspec.json`` raw modes read a file Go
wrote, and Go reads theirs. Reading Go's bytes has one loss: Go writes
``-0.0`` as ``-0``, which every JSON parser reads as the integer 0, so the
sign of a negative zero read from Go is gone (our own encoders write
``-0.0`` and keep it).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from stratabench.datasets.canonical import format_rfc3339nano, parse_rfc3339nano
from stratabench.datasets.schema import Row, Schema, datetime_from_us, us_from_datetime
from stratabench.layers.codecs.base import Format, FunctionFormat, row_converter, tuple_rows

__all__ = ["json_rows", "json_to_rows", "json_wire_format"]


def _b64encode(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def _b64decode(text: str) -> bytes:
    return base64.b64decode(text, validate=True)


def _format_us(value: datetime) -> str:
    return format_rfc3339nano(us_from_datetime(value) * 1000)


def _parse_us(text: str) -> datetime:
    return datetime_from_us(parse_rfc3339nano(text) // 1000)


_NAMESPACE: dict[str, Any] = {
    "_b64encode": _b64encode,
    "_b64decode": _b64decode,
    "_format_ns": format_rfc3339nano,
    "_parse_ns": parse_rfc3339nano,
    "_format_us": _format_us,
    "_parse_us": _parse_us,
    "_float": float,
}

_TO_WIRE = {"bytes": "_b64encode({})", "time_ns": "_format_ns({})", "time_us": "_format_us({})"}
# float(): Go writes a whole float64 without a point (``1``), which parsers
# read as an int; the canonical value is a float.
_FROM_WIRE = {"float": "_float({})", "bytes": "_b64decode({})", "time_ns": "_parse_ns({})", "time_us": "_parse_us({})"}


def json_rows(schema: Schema) -> Callable[[Iterable[Row]], list[dict[str, Any]]]:
    """A function from canonical rows to JSON-ready dicts (the wire's objects)."""
    return row_converter(schema, read="index", write="dict", convert=_TO_WIRE, namespace=_NAMESPACE)


def _plain(value: Any) -> Any:
    """A lazy parser's container proxy (pysimdjson's ``Array``, ``Object``) as a list or dict."""
    if hasattr(value, "as_list"):
        return value.as_list()
    if hasattr(value, "as_dict"):
        return value.as_dict()
    return value


_NAMESPACE["_plain"] = _plain
# A lazy parser hands back proxies for arrays and objects: read them out as lists and dicts.
_FROM_PROXIES = {**_FROM_WIRE, "list_str": "list({})", "list_int": "list({})", "any": "_plain({})"}


def json_to_rows(schema: Schema, *, proxies: bool = False) -> Callable[[Iterable[Any]], list[Row]]:
    """A function from parsed JSON objects to canonical rows (exact times).

    ``proxies``: the objects are a lazy parser's proxies, whose arrays and
    objects are read out into lists and dicts.
    """
    return row_converter(schema, read="key", write="tuple", convert=_FROM_PROXIES if proxies else _FROM_WIRE,
                         namespace=_NAMESPACE)


def json_wire_format(
    codec: str,
    schema: Schema,
    mode: str,
    *,
    loads: Callable[[bytes], Any],
    dumps: Callable[[list[dict[str, Any]]], bytes],
) -> Format:
    """A format on this wire, for a JSON library given as ``loads``/``dumps``.

    ``typed`` mode decodes with ``loads`` and builds canonical tuples in one
    generated comprehension; ``raw`` mode returns what ``loads`` returns.

    Parameters
    ----------
    loads
        Parses bytes into Python values (dicts, lists, str, ...).
    dumps
        Writes a list of dicts as UTF-8 bytes.
    """
    to_wire = json_rows(schema)
    from_wire = json_to_rows(schema)

    def encode(rows: Sequence[Row]) -> bytes:
        return dumps(to_wire(rows))

    if mode == "typed":

        def decode(data: bytes) -> object:
            return from_wire(loads(data))

        return FunctionFormat(codec, schema, mode, encode=encode, decode=decode, to_rows=tuple_rows)
    return FunctionFormat(codec, schema, mode, encode=encode, decode=loads, to_rows=from_wire)
