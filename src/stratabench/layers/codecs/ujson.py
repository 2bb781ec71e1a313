"""The ``ujson`` codec: UltraJSON (C), on the JSON codecs' wire.

Needs ``ujson`` (extra ``codecs``). Same wire as the ``json`` codec
(:mod:`stratabench.layers.codecs.json_wire`), so raw mode reads Go's
canonical JSON file. Modes:

- ``typed``: ``ujson.loads``, then one generated comprehension builds
  canonical tuples, parsing RFC3339Nano strings into integer nanoseconds;
- ``raw``: ``ujson.loads`` alone: dicts holding the strings.

ujson writes the shortest float spelling that reads back (as ``repr``), so
floats are exact; ``reject_bytes`` is left on, so a stray ``bytes`` value is
refused rather than written as text.

What it cannot do: NaN and infinities (refused with ``allow_nan=False``);
a negative zero read from Go's file (written ``-0``) comes back as ``0.0``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stratabench.datasets.schema import Schema
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format
from stratabench.layers.codecs.json_wire import json_wire_format

__all__ = ["UjsonCodec"]


@CODECS.register("ujson", requires=("ujson",), extra="codecs")
class UjsonCodec(Codec):
    """UltraJSON: a C JSON library, on Go's JSON wire."""

    modes = ("typed", "raw")

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        import ujson

        def dumps(objects: list[dict[str, Any]]) -> bytes:
            text: str = ujson.dumps(objects, ensure_ascii=False, escape_forward_slashes=False, allow_nan=False)
            return text.encode("utf-8")

        return json_wire_format(self.name, schema, mode, loads=ujson.loads, dumps=dumps)
