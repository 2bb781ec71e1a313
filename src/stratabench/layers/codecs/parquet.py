"""The ``parquet`` codec: Apache Parquet files, with pyarrow.

Needs ``pyarrow`` (extra ``codecs``). The records are one table
(:mod:`stratabench.layers.codecs.arrow_tables`: a column per field,
nanosecond UTC timestamps, which Parquet stores as INT64 NANOS) written as
one Parquet file, one row group, without Parquet's own compression (the
report sizes every format after zstd and lz4 alike) and with its default
dictionary and plain encodings. One mode, ``table``: ``decode`` reads the
file into a ``pyarrow.Table``: columns decoded into Arrow memory, no Python
object per value yet, so the format is lazy (its access and read rows build
the Python values). The Go ``parquet`` format reads these files.

What it cannot do: ``any`` fields (a column holds one type).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stratabench.datasets.schema import Row, Schema
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.arrow_tables import ANY_REFUSED, first_column, table_of, table_rows
from stratabench.layers.codecs.base import Codec, Format, FunctionFormat

__all__ = ["MAGIC", "ParquetCodec"]

MAGIC = b"PAR1"
"""The four bytes a Parquet file starts and ends with."""


@CODECS.register("parquet", requires=("pyarrow",), extra="codecs")
class ParquetCodec(Codec):
    """Parquet (pyarrow): columnar files, decoded into Arrow columns."""

    modes = ("table",)
    lazy_modes = ("table",)
    unsupported_types = ANY_REFUSED
    # read_table decodes its columns on pyarrow's thread pool: the calling thread's CPU time was 0.5-0.8 of
    # the wall time, and its rounds spread ±10-65% in default runs, whatever the loop count.
    threaded = True

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        import pyarrow as pa
        import pyarrow.parquet as pq

        build = table_of(schema)

        def encode(rows: Sequence[Row]) -> bytes:
            sink = pa.BufferOutputStream()
            pq.write_table(build(rows), sink, compression="none")
            return bytes(sink.getvalue())

        def decode(data: bytes) -> object:
            # The reader starts from the footer and never looks at the leading magic: check it, so a file
            # whose start is damaged is refused rather than read.
            if data[:4] != MAGIC:
                raise ValueError(f"no Parquet magic {MAGIC!r} at the start")
            return pq.read_table(pa.BufferReader(data))

        return FunctionFormat(self.name, schema, mode, encode=encode, decode=decode, to_rows=table_rows(schema),
                              access=first_column)
