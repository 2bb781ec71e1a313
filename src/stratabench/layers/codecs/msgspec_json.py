"""The ``msgspec.json`` codec: msgspec's JSON, decoding into Structs.

Needs ``msgspec`` (extra ``codecs``). The Structs, modes and choices are
those of :mod:`stratabench.layers.codecs.msgspec_structs`: ``typed``
decodes arrays into ``array_like`` Structs with time as integer
nanoseconds, ``raw`` reads Go's JSON wire (objects, RFC3339Nano strings)
into dicts, and ``datetime`` shows the microsecond loss of msgspec's
``datetime`` (not exact, fails integrity).

What it cannot do: read Go's JSON file in typed mode (its records are
objects and its times strings; use ``raw``, or the ``json`` codecs);
NaN and infinities (msgspec writes them as ``null``).
"""

from __future__ import annotations

from pathlib import Path

from stratabench.datasets.schema import Schema
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format
from stratabench.layers.codecs.msgspec_structs import INEXACT_MODES, MODES, msgspec_format

__all__ = ["MsgspecJsonCodec"]


@CODECS.register("msgspec.json", requires=("msgspec",), extra="codecs")
class MsgspecJsonCodec(Codec):
    """msgspec JSON into Structs: schema-driven decoding in C."""

    modes = MODES
    inexact_modes = INEXACT_MODES

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        return msgspec_format(self.name, schema, mode, "json")
