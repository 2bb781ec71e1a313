"""Records to stored bytes and back: a codec's format followed by a compressor.

The cache and matrix suites store values the same way: encode the records
with a codec (:func:`~stratabench.layers.codecs.make_format`), then
compress; and read them back: decompress, decode, and build usable records
(canonical rows, with ``datetime`` values where the schema has time), so that
every path hands back the same Python objects and the read includes the
work of making the record, as an application's would.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stratabench.datasets.schema import Row, Schema
from stratabench.layers.codecs import make_format
from stratabench.layers.codecs.base import Format
from stratabench.layers.compressors.base import Compressor
from stratabench.options import RunOptions

__all__ = ["ValuePipeline", "make_pipeline"]


class ValuePipeline:
    """A prepared format and compressor.

    Parameters
    ----------
    fmt
        The codec prepared for the schema.
    compressor
        Any compressor (``none`` passes bytes through).

    Attributes
    ----------
    dumps
        Rows to stored bytes: encode, then compress.
    loads
        Stored bytes to usable rows: decompress, decode, build the records.
    """

    def __init__(self, fmt: Format, compressor: Compressor) -> None:
        self.format = fmt
        self.compressor = compressor
        encode, decode, to_rows = fmt.encode, fmt.decode, fmt.to_rows
        compress, decompress = compressor.compress, compressor.decompress

        # Closures over locals: these are the timed calls, so no attribute
        # lookups on self inside them.
        def dumps(rows: Sequence[Row]) -> bytes:
            return compress(encode(rows))

        def loads(data: bytes) -> list[Row]:
            return to_rows(decode(decompress(data)))

        self.dumps = dumps
        self.loads = loads

    @property
    def label(self) -> str:
        """``codec+compressor``, as cells name it."""
        return f"{self.format.codec}+{self.compressor.name}"

    @property
    def notes(self) -> dict[str, Any]:
        """What to keep with a result: codec, mode, exactness, compressor and level."""
        notes: dict[str, Any] = {"codec": self.format.label, "exact": self.format.exact}
        notes.update(self.compressor.notes)
        return notes


def make_pipeline(
    codec: str, compression: str, schema: Schema, options: RunOptions | None, workdir: Path | None = None
) -> ValuePipeline:
    """Prepare ``codec`` (its default mode) and ``compression`` for ``schema`` records.

    Raises
    ------
    UnknownNameError
        For a codec or compressor that is not registered.
    UnavailableError
        When its package is missing or the codec cannot carry the schema.
    """
    from stratabench.layers.compressors import COMPRESSORS

    compressor_class: type[Compressor] = COMPRESSORS.get(compression)
    compressor = compressor_class.from_options(options)
    return ValuePipeline(make_format(codec, schema, workdir=workdir), compressor)
