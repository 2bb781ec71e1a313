"""The ``flatbuffers`` codec: FlatBuffers with Google's Python runtime, tables written by hand.

Needs ``flatbuffers`` (extra ``codecs``); no ``flatc`` step. The layout is
what ``flatc`` would generate for::

    table Record { <one field per schema field, in order> }
    table RecordList { records: [Record]; }
    root_type RecordList;

with ``bool``, ``long``, ``double``, ``string`` and ``[ubyte]``,
``[string]``, ``[long]``; ``time_ns`` a ``long`` count of nanoseconds and
``time_us`` of microseconds. The builder writes every field, defaults
included (``ForceDefaults``): FlatBuffers leaves out a value equal to its
default, and ``-0.0 == 0.0`` would lose the sign of a negative zero.

One mode, ``table``: ``decode`` only finds the root table in the bytes (no
parse, no copy), so the format is lazy (:attr:`.base.Format.lazy`):
``access`` reads the first field of every record through the tables,
``to_rows`` every field. The pure-Python runtime makes those reads, and the
encode, slow: the price of the format in Python, shown as it is.

What it cannot do: ``any`` fields (a table needs a declared type for every
value); detect every corruption (the runtime does not verify buffers, so
``decode`` checks that the root and the vector lie inside the bytes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from stratabench.datasets.schema import Row, Schema, datetime_from_us, us_from_datetime
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format, FunctionFormat

__all__ = ["FlatbuffersCodec"]


def _slot(index: int) -> int:
    """The vtable offset of field ``index``."""
    return 4 + 2 * index


def _writer(kind: str) -> Callable[[Any, Any], int | None]:
    """For a field type: a function (builder, value) that writes what must precede the table (an offset), or None."""
    if kind == "str":
        return lambda builder, value: builder.CreateString(value)
    if kind == "bytes":
        return lambda builder, value: builder.CreateByteVector(value)
    if kind == "list_str":
        def strings(builder: Any, values: list[str]) -> int:
            offsets = [builder.CreateString(value) for value in values]
            builder.StartVector(4, len(offsets), 4)
            for offset in reversed(offsets):
                builder.PrependUOffsetTRelative(offset)
            return int(builder.EndVector())
        return strings
    if kind == "list_int":
        def longs(builder: Any, values: list[int]) -> int:
            builder.StartVector(8, len(values), 8)
            for value in reversed(values):
                builder.PrependInt64(value)
            return int(builder.EndVector())
        return longs
    return lambda builder, value: None


def _reader(kind: str, index: int) -> Callable[[Any], Any]:
    """For a field type: a function from a ``Record`` table to the field's canonical value."""
    from flatbuffers import number_types as types

    slot = _slot(index)
    scalar = {"bool": types.BoolFlags, "int": types.Int64Flags, "float": types.Float64Flags,
              "time_ns": types.Int64Flags, "time_us": types.Int64Flags}

    def offset(table: Any) -> int:
        found: int = table.Offset(slot)
        if not found:
            raise ValueError(f"field {index} is missing")
        return found

    if kind in scalar:
        flags = scalar[kind]
        if kind == "time_us":
            return lambda table: datetime_from_us(table.Get(flags, table.Pos + offset(table)))
        return lambda table: table.Get(flags, table.Pos + offset(table))
    if kind == "str":
        return lambda table: table.String(table.Pos + offset(table)).decode("utf-8")
    if kind == "bytes":
        def data(table: Any) -> bytes:
            at = offset(table)
            start = table.Vector(at)
            return bytes(table.Bytes[start:start + table.VectorLen(at)])
        return data
    if kind == "list_str":
        def strings(table: Any) -> list[str]:
            at = offset(table)
            start = table.Vector(at)
            return [table.String(start + 4 * i).decode("utf-8") for i in range(table.VectorLen(at))]
        return strings

    def longs(table: Any) -> list[int]:
        at = offset(table)
        start = table.Vector(at)
        return [table.Get(types.Int64Flags, start + 8 * i) for i in range(table.VectorLen(at))]
    return longs


class _Records:
    """The root's record vector: ``len`` and iteration over ``Record`` tables, read in place."""

    def __init__(self, data: bytes) -> None:
        from flatbuffers import encode, number_types as types, table

        self._table = table.Table
        root = encode.Get(types.UOffsetTFlags.packer_type, data, 0)
        if not 4 <= root < len(data):
            raise ValueError(f"root offset {root} outside the {len(data):,} bytes")
        self._root = table.Table(data, root)
        at = self._root.Offset(4)
        if not at:
            raise ValueError("no records vector")
        self._start = self._root.Vector(at)
        self._count: int = self._root.VectorLen(at)
        if self._start + 4 * self._count > len(data):
            raise ValueError(f"{self._count:,} records do not fit in {len(data):,} bytes")
        self._data = data

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Any:
        indirect, make, data = self._root.Indirect, self._table, self._data
        for i in range(self._count):
            yield make(data, indirect(self._start + 4 * i))


@CODECS.register("flatbuffers", requires=("flatbuffers",), extra="codecs")
class FlatbuffersCodec(Codec):
    """FlatBuffers (Google's Python runtime): tables read in place, no parse."""

    modes = ("table",)
    lazy_modes = ("table",)
    unsupported_types = {"any": "a FlatBuffers table needs a declared type for every value"}

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        import flatbuffers

        kinds = [field.type for field in schema.fields]
        writers = [_writer(kind) for kind in kinds]
        readers = [_reader(kind, index) for index, kind in enumerate(kinds)]
        prepend = {"bool": "PrependBoolSlot", "int": "PrependInt64Slot", "float": "PrependFloat64Slot",
                   "time_ns": "PrependInt64Slot", "time_us": "PrependInt64Slot"}

        def encode(rows: Sequence[Row]) -> bytes:
            builder = flatbuffers.Builder(1024)
            builder.ForceDefaults(True)
            tables = []
            for row in rows:
                offsets = [write(builder, value) for write, value in zip(writers, row)]
                builder.StartObject(len(kinds))
                for index, (kind, value, offset) in enumerate(zip(kinds, row, offsets)):
                    if offset is not None:
                        builder.PrependUOffsetTRelativeSlot(index, offset, 0)
                    else:
                        scalar = us_from_datetime(value) if kind == "time_us" else value
                        getattr(builder, prepend[kind])(index, scalar, 0)
                tables.append(builder.EndObject())
            builder.StartVector(4, len(tables), 4)
            for table in reversed(tables):
                builder.PrependUOffsetTRelative(table)
            records = builder.EndVector()
            builder.StartObject(1)
            builder.PrependUOffsetTRelativeSlot(0, records, 0)
            builder.Finish(builder.EndObject())
            return bytes(builder.Output())

        def to_rows(decoded: Any) -> list[Row]:
            if not isinstance(decoded, _Records):
                raise TypeError(f"not FlatBuffers records: {type(decoded).__name__}")
            return [tuple(read(table) for read in readers) for table in decoded]

        first = readers[0]

        def access(decoded: Any) -> object:
            return [first(table) for table in decoded]

        return FunctionFormat(self.name, schema, mode, encode=encode, decode=_Records, to_rows=to_rows, access=access)
