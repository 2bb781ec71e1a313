"""msgspec Structs built from a :class:`~.base.Schema`, and the msgspec formats.

Shared by the ``msgspec.json`` and ``msgspec.msgpack`` codecs, which differ
only in the protocol module. Needs ``msgspec`` (extra ``codecs``), imported
inside the functions.

Choices, each made for decode speed within what msgspec documents:

- Structs are ``array_like=True``: a record travels as an array in field
  order, not a map, so the decoder matches no keys (and the bytes are
  smaller). Typed-mode bytes are therefore not Go's JSON wire; raw mode is.
- Structs are ``gc=False``: decoded records hold only scalars, lists and
  JSON values, which cannot form reference cycles, so the collector need not
  track them (tuples of scalars are untracked by CPython in the same way).
- The ``Decoder`` and ``Encoder`` are built once, in the format.

Field types: ``time_ns`` is a plain ``int`` of nanoseconds, because msgspec's
``datetime`` stops at microseconds; ``time_us`` is a ``datetime`` (exact at
that precision); ``any`` is ``msgspec``'s ``Any``.

Modes:

- ``typed``: ``Decoder(list[Struct])``;
- ``raw``: the untyped decoder: dicts keyed by field name (for JSON, Go's
  wire with RFC3339Nano strings; for MessagePack, ``time_ns`` as an integer
  and ``time_us`` as the timestamp extension);
- ``datetime``: a demonstration of loss, never a default: ``time_ns``
  fields become msgspec ``datetime`` values, truncated to microseconds on
  the way in. The format says ``exact=False`` and its integrity check fails
  on any dataset with sub-microsecond times.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Literal

from stratabench.datasets.schema import EPOCH, Row, Schema, datetime_from_us, us_from_datetime
from stratabench.layers.codecs.base import Format, FunctionFormat, row_converter
from stratabench.layers.codecs.json_wire import json_wire_format

__all__ = ["INEXACT_MODES", "MODES", "msgspec_format", "struct_type"]

MODES = ("typed", "raw", "datetime")
"""The modes of both msgspec codecs."""

INEXACT_MODES = ("datetime",)
"""The mode that loses nanoseconds by design."""


def _datetime_from_ns(ns: int) -> datetime:
    return datetime_from_us(ns // 1000)


def _ns_from_datetime(value: datetime) -> int:
    return us_from_datetime(value) * 1000


def struct_type(schema: Schema, *, time_ns: Literal["int", "datetime"] = "int") -> type:
    """A ``msgspec.Struct`` class (array-like, gc=False) for ``schema``'s records.

    Parameters
    ----------
    schema
        Field names and types, in order.
    time_ns
        The Python type of ``time_ns`` fields: ``int`` (exact) or
        ``datetime`` (microseconds: lossy).
    """
    import msgspec

    types: dict[str, Any] = {
        "bool": bool,
        "int": int,
        "float": float,
        "str": str,
        "bytes": bytes,
        "time_ns": int if time_ns == "int" else datetime,
        "time_us": datetime,
        "list_str": list[str],
        "list_int": list[int],
        "any": Any,
    }
    fields = [(field.name, types[field.type]) for field in schema.fields]
    name = "".join(part.capitalize() for part in schema.name.split("_")) + "Struct"
    struct: type = msgspec.defstruct(name, fields, array_like=True, gc=False, module=__name__)
    return struct


def msgspec_format(codec: str, schema: Schema, mode: str, protocol: Literal["json", "msgpack"]) -> Format:
    """Build the format of one msgspec codec (see the module docstring).

    Parameters
    ----------
    codec
        The codec's registered name, for messages.
    schema
        The record schema.
    mode
        One of :data:`MODES`.
    protocol
        ``json`` or ``msgpack``: which msgspec module encodes and decodes.
    """
    import msgspec

    module: Any = msgspec.json if protocol == "json" else msgspec.msgpack
    encoder = module.Encoder()
    if mode == "raw":
        untyped = module.Decoder()
        if protocol == "json":
            return json_wire_format(codec, schema, mode, loads=untyped.decode, dumps=encoder.encode)
        to_maps = row_converter(schema, write="dict")
        return FunctionFormat(
            codec,
            schema,
            mode,
            encode=lambda rows: encoder.encode(to_maps(rows)),
            decode=untyped.decode,
            to_rows=row_converter(schema, read="key"),
        )

    lossy = mode == "datetime"
    struct = struct_type(schema, time_ns="datetime" if lossy else "int")
    namespace = {"_make": struct, "_to_datetime": _datetime_from_ns, "_to_ns": _ns_from_datetime}
    to_structs = row_converter(
        schema, write="call", convert={"time_ns": "_to_datetime({})"} if lossy else {}, namespace=namespace
    )
    to_rows: Callable[[Any], list[Row]] = row_converter(
        schema, read="attr", convert={"time_ns": "_to_ns({})"} if lossy else {}, namespace=namespace
    )

    def encode(rows: Sequence[Row]) -> bytes:
        encoded: bytes = encoder.encode(to_structs(rows))
        return encoded

    decoder = module.Decoder(list[struct])  # type: ignore[valid-type]
    return FunctionFormat(codec, schema, mode, encode=encode, decode=decoder.decode, to_rows=to_rows, exact=not (lossy and "time_ns" in schema.types))
