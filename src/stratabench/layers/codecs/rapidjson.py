"""The ``rapidjson`` codec: python-rapidjson (RapidJSON, C++), on the JSON codecs' wire.

Needs ``python-rapidjson`` (extra ``codecs``). Same wire as the ``json``
codec (:mod:`stratabench.layers.codecs.json_wire`), so raw mode reads Go's
canonical JSON file. Modes:

- ``typed``: ``rapidjson.loads``, then one generated comprehension builds
  canonical tuples, parsing RFC3339Nano strings into integer nanoseconds
  (never through rapidjson's own ``datetime_mode``, which stops at
  microseconds);
- ``raw``: ``rapidjson.loads`` alone: dicts holding the strings.

What it cannot do: parse floats exactly in its fastest number mode
(``NM_NATIVE``; the default mode, used here, is exact); NaN and infinities
(refused: ``number_mode`` without ``NM_NAN``); a negative zero read from Go's file (written ``-0``) comes back
as ``0.0``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stratabench.datasets.schema import Schema
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format
from stratabench.layers.codecs.json_wire import json_wire_format

__all__ = ["RapidjsonCodec"]


@CODECS.register("rapidjson", requires=("rapidjson",), extra="codecs")
class RapidjsonCodec(Codec):
    """python-rapidjson: RapidJSON's C++ parser, on Go's JSON wire."""

    modes = ("typed", "raw")

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        import rapidjson

        # The default number mode: NM_NATIVE, its fastest, parses some floats a unit in the last place off
        # (-0.39715694182478556 comes back as -0.3971569418247856), which the hash caught.
        encoder = rapidjson.Encoder(ensure_ascii=False)
        decoder = rapidjson.Decoder()

        def dumps(objects: list[dict[str, Any]]) -> bytes:
            text = encoder(objects)
            assert text is not None  # an encoder without a stream returns the text
            return text.encode("utf-8")

        return json_wire_format(self.name, schema, mode, loads=decoder, dumps=dumps)
