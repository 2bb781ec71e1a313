"""The ``json`` codec: the standard library's :mod:`json`.

Needs nothing beyond the standard library. The wire is the JSON codecs'
shared one (:mod:`stratabench.layers.codecs.json_wire`): objects keyed by
field name, times as RFC3339Nano strings, bytes as base64, so raw mode reads
the canonical file Go's ``encoding/json`` writes (the bulkload asset) as it
is. Modes:

- ``typed``: ``json.loads``, then one generated comprehension builds
  canonical tuples, parsing times into integer nanoseconds (never through
  ``datetime``, which stops at microseconds);
- ``raw``: ``json.loads`` alone: dicts holding the strings.

What it cannot do: NaN and infinities (refused on encode, as Go refuses
them); a negative zero read from Go's file (written ``-0``) comes back as
``0.0``. The encoder writes Python's float spelling, so its bytes equal Go's
only where the two agree (not for magnitudes in [1e-6, 1e-4)).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stratabench.datasets.schema import Schema
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format
from stratabench.layers.codecs.json_wire import json_wire_format

__all__ = ["JsonCodec"]


@CODECS.register("json")
class JsonCodec(Codec):
    """Standard-library json: text, readable, reads Go's canonical file."""

    modes = ("typed", "raw")

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)

        def dumps(objects: list[dict[str, Any]]) -> bytes:
            return encoder.encode(objects).encode("utf-8")

        return json_wire_format(self.name, schema, mode, loads=json.loads, dumps=dumps)
