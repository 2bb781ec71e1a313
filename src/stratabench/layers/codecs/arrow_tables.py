"""Arrow tables of a :class:`~.base.Schema`: shared by the ``arrow`` (IPC) and ``parquet`` codecs.

Needs ``pyarrow`` (extra ``codecs``), imported inside the functions. A list
of records becomes one table, a column per field:

- ``bool``, ``int64``, ``float64``, ``string`` (utf8), ``binary``;
- ``time_ns``: ``timestamp[ns, tz=UTC]``, exact: Arrow keeps nanoseconds;
- ``time_us``: ``timestamp[us, tz=UTC]``;
- ``list_str`` and ``list_int``: ``list<string>``, ``list<int64>``.

Decoding gives a ``pyarrow.Table``: columns in Arrow memory, no Python
object per value yet, so both formats are lazy
(:attr:`.base.Format.lazy`): :func:`first_column` reads one field of every
record (one column to Python), :func:`table_rows` every field, column by
column, times cast to integers so that nothing goes through ``datetime``
(which would drop the nanoseconds).

What it cannot do: ``any`` fields (a column has one type).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from stratabench.datasets.schema import Row, Schema, datetime_from_us

__all__ = ["ANY_REFUSED", "arrow_schema", "first_column", "table_of", "table_rows"]

ANY_REFUSED = {"any": "an Arrow column holds one declared type"}
"""``unsupported_types`` of the Arrow-table codecs."""


def arrow_schema(schema: Schema) -> Any:
    """The ``pyarrow.Schema`` of ``schema``'s records."""
    import pyarrow as pa

    types = {
        "bool": pa.bool_(),
        "int": pa.int64(),
        "float": pa.float64(),
        "str": pa.string(),
        "bytes": pa.binary(),
        "time_ns": pa.timestamp("ns", tz="UTC"),
        "time_us": pa.timestamp("us", tz="UTC"),
        "list_str": pa.list_(pa.string()),
        "list_int": pa.list_(pa.int64()),
    }
    return pa.schema([pa.field(field.name, types[field.type], nullable=False) for field in schema.fields])


def table_of(schema: Schema) -> Callable[[Sequence[Row]], Any]:
    """A function from canonical rows to a ``pyarrow.Table`` (column by column)."""
    import pyarrow as pa

    target = arrow_schema(schema)
    us = [i for i, field in enumerate(schema.fields) if field.type == "time_us"]

    def build(rows: Sequence[Row]) -> Any:
        columns = [list(column) for column in zip(*rows)] if rows else [[] for _ in schema.fields]
        for i in us:
            # A datetime column through integers: Arrow's conversion of aware datetimes is exact too,
            # but integers say what is stored.
            from stratabench.datasets.schema import us_from_datetime

            columns[i] = [us_from_datetime(value) for value in columns[i]]
        return pa.Table.from_arrays([pa.array(column, type=field.type) for column, field in zip(columns, target)],
                                    schema=target)

    return build


def table_rows(schema: Schema) -> Callable[[Any], list[Row]]:
    """A function from a table to canonical rows: every field of every record, read out of Arrow."""
    import pyarrow as pa

    kinds = [field.type for field in schema.fields]

    def rows(table: Any) -> list[Row]:
        columns = []
        for kind, column in zip(kinds, table.columns):
            if kind == "time_ns":
                columns.append(column.cast(pa.int64()).to_pylist())
            elif kind == "time_us":
                columns.append([datetime_from_us(value) for value in column.cast(pa.int64()).to_pylist()])
            else:
                columns.append(column.to_pylist())
        if len(columns) != len(kinds):
            raise ValueError(f"{len(columns)} columns, not {len(kinds)}")
        return list(zip(*columns))

    return rows


def first_column(table: Any) -> object:
    """One field of every record: the first column, as Python values."""
    values: list[Any] = table.column(0).to_pylist()
    return values
