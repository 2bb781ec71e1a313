"""The ``msgspec.msgpack`` codec: msgspec's MessagePack, decoding into Structs.

Needs ``msgspec`` (extra ``codecs``). The Structs, modes and choices are
those of :mod:`stratabench.layers.codecs.msgspec_structs`: ``typed``
decodes arrays into ``array_like`` Structs with time as integer
nanoseconds, ``raw`` decodes maps into dicts (``time_ns`` an integer), and
``datetime`` shows the microsecond loss of msgspec's ``datetime`` (not
exact, fails integrity).

What it cannot do: read the Go adapter's msgpack or msgp assets (maps with
Go keys, times as extensions that msgspec turns into microsecond
``datetime`` values); :mod:`stratabench.layers.codecs.go_assets` reads them
with msgpack-python instead.
"""

from __future__ import annotations

from pathlib import Path

from stratabench.datasets.schema import Schema
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format
from stratabench.layers.codecs.msgspec_structs import INEXACT_MODES, MODES, msgspec_format

__all__ = ["MsgspecMsgpackCodec"]


@CODECS.register("msgspec.msgpack", requires=("msgspec",), extra="codecs")
class MsgspecMsgpackCodec(Codec):
    """msgspec MessagePack into Structs: the fastest typed decoder here."""

    modes = MODES
    inexact_modes = INEXACT_MODES

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        return msgspec_format(self.name, schema, mode, "msgpack")
