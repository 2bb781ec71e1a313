"""The ``marshal`` codec: the standard library's :mod:`marshal`.

Needs nothing beyond the standard library. marshal writes only core types
(the ones code objects are made of), so a ``time_us`` field travels as
integer microseconds and comes back as an ``int``; everything else is the
canonical value itself. Modes:

- ``typed``: the list of rows as tuples (time as integer nanoseconds);
- ``raw``: the list of records as dicts keyed by field name.

What it cannot do: outlive a Python version. The format (version
:data:`marshal.version`) is not stable across Python releases, so an asset
must be regenerated per interpreter; never a format to keep. Loading
untrusted marshal data can crash the interpreter.
"""

from __future__ import annotations

import marshal
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from stratabench.datasets.schema import Row, Schema, datetime_from_us, us_from_datetime
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format, FunctionFormat, row_converter

__all__ = ["MarshalCodec"]

_NAMESPACE = {"_us": us_from_datetime, "_datetime": datetime_from_us}


@CODECS.register("marshal")
class MarshalCodec(Codec):
    """Standard-library marshal: core types only, fastest stdlib load, per-version format."""

    modes = ("typed", "raw")

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        write: Literal["tuple", "dict"] = "tuple" if mode == "typed" else "dict"
        read: Literal["index", "key"] = "index" if mode == "typed" else "key"
        to_wire = row_converter(schema, write=write, convert={"time_us": "_us({})"}, namespace=_NAMESPACE)
        to_rows = row_converter(schema, read=read, convert={"time_us": "_datetime({})"}, namespace=_NAMESPACE)

        def encode(rows: Sequence[Row]) -> bytes:
            return marshal.dumps(to_wire(rows))

        return FunctionFormat(self.name, schema, mode, encode=encode, decode=marshal.loads, to_rows=to_rows)
