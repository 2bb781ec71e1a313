"""The ``orjson`` codec: the orjson library (Rust), on the JSON codecs' wire.

Needs ``orjson`` (extra ``codecs``). Same wire as the ``json`` codec
(:mod:`stratabench.layers.codecs.json_wire`), so raw mode reads Go's
canonical JSON file. Modes:

- ``typed``: ``orjson.loads``, then one generated comprehension builds
  canonical tuples, parsing RFC3339Nano strings into integer nanoseconds;
- ``raw``: ``orjson.loads`` alone: dicts holding the strings.

orjson never turns strings into ``datetime`` on loads, and this codec never
hands it a ``datetime`` to dump for a nanosecond field (it would write
microseconds), so both modes are exact.

What it cannot do: integers outside [-2**63, 2**64); NaN and infinities
(orjson writes them as ``null``, so a float field holding one is refused
before encoding; inside an ``any`` field it would silently become
``null``); a negative zero read from Go's file (written ``-0``) comes back
as ``0.0``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from stratabench.datasets.schema import Schema
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format
from stratabench.layers.codecs.json_wire import json_wire_format

__all__ = ["OrjsonCodec"]


@CODECS.register("orjson", requires=("orjson",), extra="codecs")
class OrjsonCodec(Codec):
    """orjson: the fastest JSON parser for Python, on Go's JSON wire."""

    modes = ("typed", "raw")

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        import orjson

        float_keys = [field.name for field in schema.fields if field.type == "float"]

        def dumps(objects: list[dict[str, Any]]) -> bytes:
            # orjson writes NaN and infinities as null without a word; JSON
            # cannot hold them, so refuse as the stdlib codec does.
            for item in objects:
                for key in float_keys:
                    if not math.isfinite(item[key]):
                        raise ValueError(f"JSON cannot hold the float {item[key]!r} of field {key!r}")
            return orjson.dumps(objects)

        return json_wire_format(self.name, schema, mode, loads=orjson.loads, dumps=dumps)
