"""The user's own records: a JSON Lines or CSV file, read as schema rows.

``stratabench run matrix --data FILE`` measures the user's records, not
ours. This module reads the file (never writes it), infers a
:class:`~stratabench.layers.codecs.base.Schema`, and gives the records as
rows with their canonical hash
(:func:`stratabench.datasets.records_json.canonical_hash` over the file's
own keys).

**JSON Lines** (``.jsonl``, ``.ndjson``, or any file whose first character
is ``{``): one JSON object per line; blank lines are skipped. The fields are
every key seen, in order of first appearance; a key missing from a record
reads as ``null``.

**CSV** (``.csv``, or anything else): a header row, then one record per
row, every row as wide as the header. A column is ``int`` when every
non-empty cell is a plain integer (``-12``, no leading zeros), ``float``
when every non-empty cell is a finite number and not all are integers,
``bool`` when every non-empty cell is ``true`` or ``false``; then its empty
cells are ``null``. Numbers are written as JSON writes them: ``007`` is a
code, and its column stays text. Any other column is text, empty cells
included.

**Types.** A field is ``bool``, ``int`` (signed 64-bit), ``float``,
``str``, ``list_str`` or ``list_int`` when all its values have that type
(an empty array fits either list); a field with nulls, mixed types, nested
objects, other arrays, or integers beyond 64 bits is ``any`` (a JSON
value), which every codec but protobuf carries. Field names become
ASCII identifiers for the codecs (``first-name`` → ``first_name``); the
hash keeps the file's keys.

Malformed input (bad JSON on a line, a line that is not an object, a ragged
CSV row, text that is not UTF-8, an empty file) is a
:class:`~stratabench.errors.DataError` naming the file and line. Parsed
files are kept in the on-disk dataset cache, keyed by the file's SHA-1, so
the run's worker processes parse each file once.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import keyword
import math
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stratabench.datasets.cache import cached
from stratabench.datasets.records_json import canonical_hash
from stratabench.datasets.schema import Field, FieldType, Row, Schema
from stratabench.errors import DataError
from stratabench.input_file import read_input_file
from stratabench.json_lines import BadLine, NestedTooDeeply, json_objects

__all__ = ["UserRecords", "load_records"]

_INT64 = range(-(2**63), 2**63)
_PLAIN_INT = re.compile(r"-?(0|[1-9][0-9]*)\Z")
# A number as JSON writes one: no leading zeros (``007`` is a code, kept as text), no spaces.
_PLAIN_FLOAT = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?\Z")
# Bump when parsing or inference changes, so the cache never serves an old reading.
_VERSION = 4

#: The largest records file read: its records are held in memory, parsed, several times over.
MAX_RECORDS_BYTES = 1_000_000_000
#: The deepest nesting of arrays and objects a record may have. Records nest
#: a few levels; every codec and the canonical hash walk values recursively,
#: so a deeper record would exhaust their stacks instead of being measured.
MAX_DEPTH = 32
#: The longest line of a JSON Lines file, in bytes: beyond any store's item
#: limit (memcached's is 1 MB), and a bound on what one record may cost to parse.
MAX_LINE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class UserRecords:
    """Records read from a user's file.

    Attributes
    ----------
    path
        The file, as given.
    schema
        Inferred; field names are identifiers derived from the file's keys.
    keys
        The file's own key (JSON) or column name (CSV) of each field.
    rows
        The records as tuples in field order.
    """

    path: str
    schema: Schema
    keys: tuple[str, ...]
    rows: list[Row]

    def canonical_hash(self, rows: Sequence[Row] | None = None) -> str:
        """The hash of ``rows`` (these records by default) under the file's keys."""
        return canonical_hash(self.schema, self.rows if rows is None else rows, self.keys)

    @property
    def hash(self) -> str:
        """The hash of the records as read."""
        return self.canonical_hash()


def load_records(path: str | Path) -> UserRecords:
    """Read a JSON Lines or CSV file of records (see the module docstring).

    Raises
    ------
    DataError
        Naming the file and line, for a missing, unreadable, empty or malformed file.
    """
    path = Path(path)
    data = read_input_file(path, limit=MAX_RECORDS_BYTES, what="--data a JSON Lines or CSV file")
    digest = hashlib.sha1(data).hexdigest()
    records: UserRecords = cached(f"userfile-v{_VERSION}-{digest}", lambda: _parse(str(path), data))
    return UserRecords(str(path), records.schema, records.keys, records.rows)


def _parse(name: str, data: bytes) -> UserRecords:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if not data.strip():
        raise DataError(f"{name}: no records (the file is empty); give one JSON object per line, or a CSV header and rows")
    suffix = Path(name).suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json") or (suffix != ".csv" and data.lstrip()[:1] == b"{"):
        keys, records = _read_json_lines(name, data)
        types = [_json_type(key, records) for key in keys]
    else:
        keys, cells = _read_csv(name, data)
        types, records = _csv_types(keys, cells)
    if not records:
        raise DataError(f"{name}: no records; give one JSON object per line, or a CSV header and rows")
    if not keys:
        raise DataError(f"{name}: the records have no fields")
    schema = Schema("records", tuple(Field(field, kind) for field, kind in zip(_identifiers(keys), types)))
    rows = [tuple(record.get(key) for key in keys) for record in records]
    return UserRecords(name, schema, tuple(keys), rows)


def _lines(name: str, data: bytes) -> Iterator[tuple[int, str]]:
    for number, raw in enumerate(data.split(b"\n"), 1):
        if len(raw) > MAX_LINE_BYTES:
            raise DataError(f"{name}, line {number}: {len(raw):,} bytes, longer than the {MAX_LINE_BYTES:,} a "
                            "record may take; is this one record per line?")
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise DataError(
                f"{name}, line {number}: not UTF-8 (byte {error.start + 1} of the line); save the file as UTF-8"
            ) from None


def _no_constants(text: str) -> float:
    raise ValueError(f"{text} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is too large for a 64-bit float")
    return value


def _read_json_lines(name: str, data: bytes) -> tuple[list[str], list[dict[str, Any]]]:
    decoder = json.JSONDecoder(parse_constant=_no_constants, parse_float=_finite_float)
    keys: dict[str, None] = {}
    records: list[dict[str, Any]] = []

    def bad_line(line: BadLine) -> DataError:
        where = f"{name}, line {line.number}"
        if isinstance(line.error, json.JSONDecodeError):
            error = line.error
            return DataError(f"{where}: not JSON ({error.msg} at column {error.colno}); each line must be one JSON object")
        if isinstance(line.error, NestedTooDeeply):
            return DataError(f"{where}: nested deeper than {MAX_DEPTH} levels of arrays and objects; flatten the record")
        if line.error is not None and "integer string conversion" in str(line.error):
            return DataError(f"{where}: an integer of more than {sys.get_int_max_str_digits():,} digits; "
                             "write it as a string")
        if line.error is not None:
            return DataError(f"{where}: {line.error}; NaN and infinities have no exact JSON form")
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(line.value), "a number")
        return DataError(f"{where}: expected a JSON object, got {kind}; each line must be one object (JSON Lines)")

    for number, value in json_objects((line for _, line in _lines(name, data)), bad_line, decode=decoder.decode):
        if _depth(value) > MAX_DEPTH:
            raise DataError(f"{name}, line {number}: nested deeper than {MAX_DEPTH} levels of arrays and objects; "
                            "flatten the record")
        keys.update(dict.fromkeys(value))
        records.append(value)
    return list(keys), records


def _depth(value: Any) -> int:
    """How deeply arrays and objects nest in ``value`` (a scalar is 0), without recursion."""
    deepest, pending = 0, [(value, 0)]
    while pending:
        item, level = pending.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level + 1)
            if level + 1 > MAX_DEPTH:
                break
            pending += [(child, level + 1) for child in (item.values() if isinstance(item, dict) else item)]
    return deepest


def _kind(value: Any) -> str:
    """The field type one JSON value fits, or ``any``."""
    kind = type(value)
    if kind is int:
        return "int" if value in _INT64 else "any"
    if kind is list:
        items = {_kind(item) for item in value}
        if items <= {"str"}:
            return "list_str" if items else "list"
        return "list_int" if items == {"int"} else "any"
    return {bool: "bool", float: "float", str: "str"}.get(kind, "any")


def _json_type(key: str, records: Sequence[dict[str, Any]]) -> FieldType:
    kinds = set()
    for record in records:
        value = record.get(key)
        if value is None:
            return "any"
        kinds.add(_kind(value))
    if "list" in kinds:  # an empty array fits either list type
        kinds.discard("list")
        kinds = kinds or {"list_str"}
        if kinds not in ({"list_str"}, {"list_int"}):
            return "any"
    if len(kinds) != 1:
        return "any"
    return kinds.pop()  # type: ignore[return-value]


def _read_csv(name: str, data: bytes) -> tuple[list[str], list[list[str]]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise DataError(f"{name}, line {line}: not UTF-8; save the file as UTF-8") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
        seen: set[str] = set()
        for column in header:
            if column in seen:
                raise DataError(f"{name}, line 1: column {column!r} appears twice in the header; rename one")
            seen.add(column)
        rows = []
        for row in reader:
            if not row:
                continue  # a blank line
            if len(row) != len(header):
                raise DataError(
                    f"{name}, line {reader.line_num}: {len(row)} field{'s' if len(row) != 1 else ''}, "
                    f"but the header has {len(header)}; "
                    "every row must have one value per column"
                )
            rows.append(row)
    except csv.Error as error:
        raise DataError(f"{name}, line {reader.line_num}: malformed CSV ({error})") from None
    return header, rows


def _csv_column(values: list[str]) -> tuple[FieldType, list[Any]]:
    present = [value for value in values if value != ""]
    # Twenty digits hold any 64-bit integer; int() refuses a few thousand digits (a ValueError).
    if present and all(_PLAIN_INT.match(value) and len(value) <= 20 and int(value) in _INT64 for value in present):
        return _nullable("int", [int(value) if value else None for value in values])
    if present and all(value in ("true", "false") for value in present):
        return _nullable("bool", [value == "true" if value else None for value in values])
    if present and all(_finite(value) for value in present):
        return _nullable("float", [float(value) if value else None for value in values])
    return "str", values


def _finite(text: str) -> bool:
    return _PLAIN_FLOAT.match(text) is not None and math.isfinite(float(text))


def _nullable(kind: FieldType, values: list[Any]) -> tuple[FieldType, list[Any]]:
    return ("any" if any(value is None for value in values) else kind), values


def _csv_types(header: list[str], cells: list[list[str]]) -> tuple[list[FieldType], list[dict[str, Any]]]:
    types: list[FieldType] = []
    columns: list[list[Any]] = []
    for index in range(len(header)):
        kind, values = _csv_column([row[index] for row in cells])
        types.append(kind)
        columns.append(values)
    records = [dict(zip(header, values)) for values in zip(*columns)] if header else []
    return types, records


def _identifiers(keys: Sequence[str]) -> list[str]:
    """ASCII identifiers for the keys, unique, as close to the keys as possible."""
    names: list[str] = []
    taken: set[str] = set()
    for key in keys:
        name = re.sub(r"[^A-Za-z0-9_]", "_", key) or "field"
        if name[0].isdigit():
            name = f"f_{name}"
        if keyword.iskeyword(name):
            name += "_"
        candidate, suffix = name, 2
        while candidate in taken:
            candidate, suffix = f"{name}_{suffix}", suffix + 1
        taken.add(candidate)
        names.append(candidate)
    return names
