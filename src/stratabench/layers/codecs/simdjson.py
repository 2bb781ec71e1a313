"""The ``simdjson`` codec: pysimdjson (simdjson, C++), a parser only, on the JSON codecs' wire.

Needs ``pysimdjson`` (extra ``codecs``). It reads the ``json`` codec's wire
(:mod:`stratabench.layers.codecs.json_wire`), so both modes read Go's
canonical JSON file. Modes:

- ``lazy``: ``Parser().parse``: simdjson's parse into its own tape, with
  Python proxies (``Array``, ``Object``) that build a value only when it is
  read. The format is lazy (:attr:`.base.Format.lazy`): ``access`` reads one
  field of every record through the proxies, ``to_rows`` every field. A new
  parser per decode: a parser's document dies when it parses the next one.
- ``raw``: ``simdjson.loads``: the whole document as dicts and lists at once.

It has no encoder of its own (``simdjson.dumps`` is the standard library's),
so ``encode`` writes with :mod:`json` and there is no encode row
(:attr:`no_encode_row`).

What it cannot do: NaN and infinities (JSON has none); a negative zero read
from Go's file (written ``-0``) comes back as ``0.0``.
"""

from __future__ import annotations

import json
import operator
from pathlib import Path
from typing import Any

from stratabench.datasets.schema import Schema
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format, FunctionFormat
from stratabench.layers.codecs.json_wire import json_rows, json_to_rows

__all__ = ["SimdjsonCodec"]


@CODECS.register("simdjson", requires=("simdjson",), extra="codecs")
class SimdjsonCodec(Codec):
    """pysimdjson: SIMD JSON parsing, lazily through proxies or all at once."""

    modes = ("lazy", "raw")
    lazy_modes = ("lazy",)
    no_encode_row = "pysimdjson only parses: its dumps is the standard library's json"

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        import simdjson

        encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        to_wire = json_rows(schema)

        def encode(rows: Any) -> bytes:
            return encoder.encode(to_wire(rows)).encode("utf-8")

        if mode == "raw":
            return FunctionFormat(self.name, schema, mode, encode=encode, decode=simdjson.loads,
                                  to_rows=json_to_rows(schema))
        parser = simdjson.Parser

        def decode(data: bytes) -> object:
            return parser().parse(data)

        first = operator.itemgetter(schema.fields[0].name)

        def access(document: Any) -> object:
            return [first(record) for record in document]

        return FunctionFormat(self.name, schema, mode, encode=encode, decode=decode,
                              to_rows=json_to_rows(schema, proxies=True), access=access)
