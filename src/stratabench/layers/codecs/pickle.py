"""The ``pickle`` codec: the standard library's :mod:`pickle`, protocol 5.

Needs nothing beyond the standard library. Pickle stores Python objects
themselves, so every field type is exact, ``time_us`` datetimes included.
Modes:

- ``typed``: the list of rows as plain tuples (time as integer
  nanoseconds); ``pickle.loads`` hands back canonical rows directly;
- ``raw``: the list of records as dicts keyed by field name, the shape
  schemaless Python code usually caches.

What it cannot do: be read by anything but Python, or be trusted: loading a
pickle runs code, so only ever decode what this process wrote.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from stratabench.datasets.schema import Row, Schema
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format, FunctionFormat, row_converter, tuple_rows

__all__ = ["PickleCodec"]

PROTOCOL = 5
"""The pickle protocol written: 5, the highest of Python 3.8 and later."""


@CODECS.register("pickle")
class PickleCodec(Codec):
    """Standard-library pickle, protocol 5: exact for any Python value."""

    modes = ("typed", "raw")

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        to_wire: Callable[[Iterable[Any]], list[Any]]
        to_rows: Callable[[Iterable[Any]], list[Any]]
        if mode == "typed":
            # Plain tuples, never the caller's row class: a named tuple would
            # be pickled by reference and rebuilt through its class.
            to_wire = tuple_rows
            to_rows = tuple_rows
        else:
            to_wire = row_converter(schema, write="dict")
            to_rows = row_converter(schema, read="key")

        def encode(rows: Sequence[Row]) -> bytes:
            return pickle.dumps(to_wire(rows), protocol=PROTOCOL)

        return FunctionFormat(self.name, schema, mode, encode=encode, decode=pickle.loads, to_rows=to_rows)
