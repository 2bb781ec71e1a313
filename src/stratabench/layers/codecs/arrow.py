"""The ``arrow`` codec: the Apache Arrow IPC stream format, with pyarrow.

Needs ``pyarrow`` (extra ``codecs``). The records are one table
(:mod:`stratabench.layers.codecs.arrow_tables`: a column per field,
nanosecond UTC timestamps) written as an IPC stream of one record batch,
uncompressed. One mode, ``table``: ``decode`` maps the bytes into a
``pyarrow.Table`` without copying them; the format is lazy (its access and
read rows build the Python values). The Go ``arrow`` format writes the same
stream, so each reads the other's.

What it cannot do: ``any`` fields (a column holds one type).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stratabench.datasets.schema import Row, Schema
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.arrow_tables import ANY_REFUSED, first_column, table_of, table_rows
from stratabench.layers.codecs.base import Codec, Format, FunctionFormat

__all__ = ["ArrowCodec"]


@CODECS.register("arrow", requires=("pyarrow",), extra="codecs")
class ArrowCodec(Codec):
    """Arrow IPC (pyarrow): columnar, read in place without a copy."""

    modes = ("table",)
    lazy_modes = ("table",)
    unsupported_types = ANY_REFUSED

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        import pyarrow as pa

        build = table_of(schema)

        def encode(rows: Sequence[Row]) -> bytes:
            table = build(rows)
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, table.schema) as writer:
                writer.write_table(table)
            return bytes(sink.getvalue())

        def decode(data: bytes) -> object:
            return pa.ipc.open_stream(pa.py_buffer(data)).read_all()

        return FunctionFormat(self.name, schema, mode, encode=encode, decode=decode, to_rows=table_rows(schema),
                              access=first_column)
