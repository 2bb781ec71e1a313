"""The codec contract: record schemas, formats, and checks of decoded rows.

A *codec* (one plugin module each, registered in
:data:`stratabench.layers.codecs.CODECS`) turns a list of records of one
:class:`Schema` into bytes and back. ``Codec().format(schema, mode)`` builds
a :class:`Format`, once and outside any timed region; it holds everything
that can be prepared ahead (decoders, Struct and message classes, compiled
conversion functions), so that :meth:`Format.decode` - the call suites time
- does only the work of loading.

Rows are tuples in field order, the canonical Python form of a record
(``BulkRecord`` is such a tuple). Canonical values by field type:

=========== ==========================================================
``bool``    ``bool``
``int``     ``int``, signed 64-bit
``float``   ``float`` (binary64)
``str``     ``str``
``bytes``   ``bytes``
``time_ns`` ``int`` nanoseconds since the Unix epoch (UTC)
``time_us`` aware UTC ``datetime`` (microsecond precision)
``list_str`` ``list`` of ``str``
``list_int`` ``list`` of ``int``
``any``     a JSON value (``dict``, ``list``, ``str``, ``int``, ``float``,
            ``bool``, ``None``)
=========== ==========================================================

A single record (the cache suite's ``article``) is a list of one row: there
is no separate single-record API.

Modes name what ``decode`` hands back: ``typed`` gives typed records
(tuples, dataclasses, msgspec Structs, protobuf messages) with time as
integer nanoseconds; ``raw`` gives the codec's natural objects (dicts with
RFC3339Nano strings for the JSON codecs). :meth:`Format.to_rows` converts
either back to canonical rows, outside timing, for hashing; the dataset's
canonical hash of those rows is the integrity check
(:func:`verify_rows`).

Errors: library exceptions raised while encoding, decoding or converting
become :class:`~stratabench.errors.DataError` here, in the base class, so a
truncated or corrupt input fails a cell with one line whatever the codec.
"""

from __future__ import annotations

import keyword
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, ClassVar, Literal, get_args

from stratabench.engine.operation import Integrity
from stratabench.errors import DataError, StratabenchError, UnavailableError, UsageError

__all__ = [
    "BULKLOAD_SCHEMA",
    "EPOCH",
    "FIELD_TYPES",
    "Codec",
    "Field",
    "FieldType",
    "Format",
    "FunctionFormat",
    "Row",
    "Schema",
    "datetime_from_us",
    "first_difference",
    "json_value",
    "make_format",
    "row_converter",
    "thawed_rows",
    "tuple_rows",
    "us_from_datetime",
    "verify_rows",
]

FieldType = Literal["bool", "int", "float", "str", "bytes", "time_ns", "time_us", "list_str", "list_int", "any"]
FIELD_TYPES: tuple[str, ...] = get_args(FieldType)
"""Every field type a :class:`Field` may have."""

Row = tuple[Any, ...]
"""One record: its canonical values in field order."""

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
"""The Unix epoch as an aware UTC ``datetime``."""

_ONE_US = timedelta(microseconds=1)
# How much of a library's error message to keep in ours (one line, readable).
_MAX_CAUSE = 160


def us_from_datetime(value: datetime) -> int:
    """Microseconds since the epoch of an aware ``datetime``, exactly (no float)."""
    return (value - EPOCH) // _ONE_US


def datetime_from_us(us: int) -> datetime:
    """The aware UTC ``datetime`` ``us`` microseconds after the epoch."""
    return EPOCH + timedelta(microseconds=us)


@dataclass(frozen=True)
class Field:
    """One field of a record.

    Attributes
    ----------
    name
        A Python identifier: it becomes a Struct attribute, a protobuf field
        and a map key.
    type
        One of :data:`FIELD_TYPES`; see the module docstring for the
        canonical value of each.
    """

    name: str
    type: FieldType

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or keyword.iskeyword(self.name):
            raise UsageError(f"field name {self.name!r} is not a Python identifier; rename the field")
        if self.type not in FIELD_TYPES:
            raise UsageError(f"field {self.name!r} has unknown type {self.type!r}; known: {', '.join(FIELD_TYPES)}")


@dataclass(frozen=True)
class Schema:
    """The shape of a record: a name and its fields in order.

    Attributes
    ----------
    name
        An identifier, used to name generated classes and modules.
    fields
        The fields, in the order of a row's values.
    """

    name: str
    fields: tuple[Field, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        if not self.name.isidentifier():
            raise UsageError(f"schema name {self.name!r} is not an identifier; rename the schema")
        if not self.fields:
            raise UsageError(f"schema {self.name!r} has no fields; give it at least one")
        names = [field.name for field in self.fields]
        if len(set(names)) != len(names):
            raise UsageError(f"schema {self.name!r} repeats a field name: {', '.join(names)}")

    @property
    def names(self) -> tuple[str, ...]:
        """The field names in order."""
        return tuple(field.name for field in self.fields)

    @property
    def types(self) -> frozenset[str]:
        """The field types the schema uses."""
        return frozenset(field.type for field in self.fields)


BULKLOAD_SCHEMA = Schema(
    "bulkload",
    (
        Field("bool", "bool"),
        Field("int", "int"),
        Field("float", "float"),
        Field("string", "str"),
        Field("time", "time_ns"),
    ),
)
"""The five-field record of the bulkload dataset (specs/bulkload.md section 1)."""


def _cause(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= _MAX_CAUSE else text[: _MAX_CAUSE - 3] + "..."


class Format(ABC):
    """One codec prepared for one schema and mode: encode, decode, convert back.

    Build it with :meth:`Codec.format`. Subclasses implement ``_encode``,
    ``_decode`` and ``_to_rows``; the public methods wrap them so that any
    library error becomes a one-line :class:`~stratabench.errors.DataError`.

    Attributes
    ----------
    codec
        The codec's registered name.
    schema
        The record schema.
    mode
        The mode: what ``decode`` returns (``typed``, ``raw``, ...).
    exact
        Whether the format can carry every value of the schema exactly. A
        format that is not exact (a microsecond ``datetime`` for a
        nanosecond field) still runs; its integrity check then fails.
    resident
        Whether a load needs no bytes from storage because the records are
        already in this process (embed's ``resident`` mode). Suites then
        leave reading the asset out of the timed operation.
    """

    resident: bool = False

    def __init__(self, codec: str, schema: Schema, mode: str, *, exact: bool = True) -> None:
        self.codec = codec
        self.schema = schema
        self.mode = mode
        self.exact = exact

    @property
    def label(self) -> str:
        """``codec/mode``, as cells and messages name the format."""
        return f"{self.codec}/{self.mode}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label} schema={self.schema.name} exact={self.exact}>"

    def encode(self, rows: Sequence[Row]) -> bytes:
        """Encode canonical rows (a list of one row for a single record).

        Raises
        ------
        DataError
            If a row does not fit the schema or the codec refuses a value.
        """
        try:
            return self._encode(rows)
        except StratabenchError:
            raise
        except Exception as error:
            raise DataError(f"{self.label}: cannot encode {len(rows):,} {self.schema.name} rows: {_cause(error)}") from error

    def decode(self, data: bytes) -> object:
        """Decode what :meth:`encode` wrote: the operation suites time.

        Raises
        ------
        DataError
            If ``data`` is truncated, corrupt or of another shape.
        """
        try:
            return self._decode(data)
        except StratabenchError:
            raise
        except Exception as error:
            raise DataError(
                f"{self.label}: cannot decode {len(data):,} bytes as {self.schema.name} records "
                f"(truncated, corrupt or another format?): {_cause(error)}"
            ) from error

    def to_rows(self, decoded: object) -> list[Row]:
        """Convert what :meth:`decode` returned to canonical rows (untimed).

        Raises
        ------
        DataError
            If the decoded value does not have the schema's shape.
        """
        try:
            return self._to_rows(decoded)
        except StratabenchError:
            raise
        except Exception as error:
            raise DataError(f"{self.label}: decoded value is not a list of {self.schema.name} records: {_cause(error)}") from error

    @abstractmethod
    def _encode(self, rows: Sequence[Row]) -> bytes: ...

    @abstractmethod
    def _decode(self, data: bytes) -> object: ...

    @abstractmethod
    def _to_rows(self, decoded: Any) -> list[Row]: ...


class FunctionFormat(Format):
    """A format assembled from three functions, the common case.

    Parameters
    ----------
    encode
        Canonical rows to bytes.
    decode
        Bytes to the decoded value: the timed call, so it should be a
        library function or one compiled for the schema.
    to_rows
        The decoded value to canonical rows.
    exact
        See :attr:`Format.exact`.
    """

    def __init__(
        self,
        codec: str,
        schema: Schema,
        mode: str,
        *,
        encode: Callable[[Sequence[Row]], bytes],
        decode: Callable[[bytes], object],
        to_rows: Callable[[Any], list[Row]],
        exact: bool = True,
    ) -> None:
        super().__init__(codec, schema, mode, exact=exact)
        # Instance attributes shadow the methods below, so the public
        # wrappers call the given functions with no extra frame between.
        self._encode = encode  # type: ignore[method-assign, assignment]
        self._decode = decode  # type: ignore[method-assign, assignment]
        self._to_rows = to_rows  # type: ignore[method-assign, assignment]

    def _encode(self, rows: Sequence[Row]) -> bytes:
        raise NotImplementedError

    def _decode(self, data: bytes) -> object:
        raise NotImplementedError

    def _to_rows(self, decoded: Any) -> list[Row]:
        raise NotImplementedError


def json_value(value: Any) -> Any:
    """A JSON value with the tuples and read-only mappings of some decoders made lists and dicts.

    For ``to_rows`` of codecs that decode arrays as tuples (msgpack's
    ``use_list=False``, cbor2's ``immutable=True``) where an ``any`` field
    needs its canonical lists back.
    """
    if isinstance(value, (tuple, list)):
        return [json_value(item) for item in value]
    if isinstance(value, Mapping):
        return {key: json_value(item) for key, item in value.items()}
    return value


def thawed_rows(schema: Schema) -> Callable[[Iterable[Any]], list[Row]]:
    """``to_rows`` for decoders that make every array a tuple (and maps read-only).

    msgpack's ``use_list=False`` and cbor2's ``immutable=True`` build row
    tuples in C; this gives ``list_str``, ``list_int`` and ``any`` values
    their canonical lists and dicts back.
    """
    return row_converter(
        schema,
        convert={"list_str": "list({})", "list_int": "list({})", "any": "_json_value({})"},
        namespace={"_json_value": json_value},
    )


def tuple_rows(decoded: Iterable[Sequence[Any]]) -> list[Row]:
    """``to_rows`` for decoders that already return canonical rows (as tuples or lists)."""
    return [tuple(row) for row in decoded]


class Codec(ABC):
    """A serialization library, registered with ``@CODECS.register("name")``.

    A codec is a factory of :class:`Format` objects, one per schema and mode.
    Subclasses set :attr:`modes` and :attr:`unsupported_types` and implement
    ``_format``; optional packages are imported there, never at module top.
    """

    name: ClassVar[str]
    #: The modes this codec offers; the first is its default.
    modes: ClassVar[tuple[str, ...]] = ("typed",)
    #: Modes that lose data by design (a demonstration, never a default):
    #: their formats are not exact for a schema with a field they lose, and
    #: suites leave them out unless asked. Known without building a format.
    inexact_modes: ClassVar[tuple[str, ...]] = ()
    #: Field types the codec cannot represent, each with a one-line reason.
    unsupported_types: ClassVar[Mapping[str, str]] = {}

    def format(self, schema: Schema, mode: str | None = None, *, workdir: Path | None = None) -> Format:
        """Prepare encoding and decoding of ``schema`` records in ``mode``.

        Parameters
        ----------
        schema
            The record schema.
        mode
            One of :attr:`modes`; ``None`` means the first.
        workdir
            A directory of the caller's own, for codecs whose assets are
            files (``embed``); ignored by the others.

        Raises
        ------
        UsageError
            If the codec has no such mode, or needs a ``workdir``.
        UnavailableError
            If the codec cannot represent a field type of ``schema``, or a
            package it needs is missing.
        """
        mode = self.modes[0] if mode is None else mode
        if mode not in self.modes:
            raise UsageError(f"codec {self.name!r} has no mode {mode!r}; its modes: {', '.join(self.modes)}")
        for field in schema.fields:
            reason = self.unsupported_types.get(field.type)
            if reason is not None:
                raise UnavailableError(f"{self.name}/{mode} cannot carry field {field.name!r} ({field.type}): {reason}")
        return self._format(schema, mode, workdir)

    @abstractmethod
    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format: ...


def make_format(codec: str, schema: Schema, mode: str | None = None, *, workdir: Path | None = None) -> Format:
    """Look up ``codec`` in the registry and prepare it: the suites' entry point.

    Raises
    ------
    UnknownNameError
        If no codec is registered as ``codec``.
    UnavailableError
        If its package is missing or it cannot carry the schema.
    UsageError
        If it has no such mode.
    """
    from stratabench.layers.codecs import CODECS

    codec_class = CODECS.get(codec)
    instance: Codec = codec_class()
    return instance.format(schema, mode, workdir=workdir)


def row_converter(
    schema: Schema,
    *,
    read: Literal["index", "key", "attr"] = "index",
    write: Literal["tuple", "dict", "call"] = "tuple",
    convert: Mapping[str, str] | None = None,
    keys: Sequence[str] | None = None,
    namespace: Mapping[str, Any] | None = None,
) -> Callable[[Iterable[Any]], list[Any]]:
    """Compile a function that turns every item of an iterable into a record.

    Generated code (as :mod:`dataclasses` does) is the fastest way to apply
    per-field conversions in pure Python: one list comprehension with every
    field access spelled out, no loop over fields at run time.

    Parameters
    ----------
    schema
        The fields, in the order of the records produced.
    read
        How to get field ``i`` of an item: ``item[i]``, ``item[key]`` or
        ``item.name``.
    write
        What to build: a tuple, a dict keyed by ``keys``, or ``_make(...)``
        with the values as positional arguments (``namespace`` provides
        ``_make``, for example a Struct or message class).
    convert
        By field type, an expression in which ``{}`` stands for the field's
        value, once (``"_parse({})"``); types not listed are copied as is.
    keys
        Map keys per field for ``read="key"`` and ``write="dict"``; the
        field names by default.
    namespace
        Names the expressions use.
    """
    keys = tuple(schema.names if keys is None else keys)
    if len(keys) != len(schema.fields):
        raise UsageError(f"row_converter: {len(keys)} keys for {len(schema.fields)} fields of {schema.name!r}")
    convert = convert or {}
    values = []
    for i, field in enumerate(schema.fields):
        if read == "index":
            access = f"_item[{i}]"
        elif read == "key":
            access = f"_item[{keys[i]!r}]"
        else:
            access = f"_item.{field.name}"
        values.append(convert.get(field.type, "{}").replace("{}", access))
    if write == "tuple":
        record = f"({', '.join(values)},)"
    elif write == "dict":
        record = "{" + ", ".join(f"{key!r}: {value}" for key, value in zip(keys, values)) + "}"
    else:
        record = f"_make({', '.join(values)})"
    source = f"def convert(_items):\n    return [{record} for _item in _items]\n"
    scope: dict[str, Any] = dict(namespace or {})
    exec(compile(source, f"<stratabench row_converter {schema.name}>", "exec"), scope)
    function: Callable[[Iterable[Any]], list[Any]] = scope["convert"]
    return function


def _same(expected: object, actual: object) -> bool:
    # Types first: True == 1 and 1 == 1.0 in Python, but not in the
    # canonical form; repr for floats tells -0.0 from 0.0.
    if type(expected) is not type(actual):
        return False
    if isinstance(expected, float):
        return repr(expected) == repr(actual)
    if isinstance(expected, (list, tuple)):
        assert isinstance(actual, (list, tuple))
        return len(expected) == len(actual) and all(map(_same, expected, actual))
    if isinstance(expected, dict):
        assert isinstance(actual, dict)
        return expected.keys() == actual.keys() and all(_same(value, actual[key]) for key, value in expected.items())
    return expected == actual


def _show(value: object) -> str:
    text = f"{type(value).__name__} {value!r}"
    return text if len(text) <= 80 else text[:77] + "..."


def first_difference(schema: Schema, expected: Sequence[Row], actual: Sequence[Row]) -> str | None:
    """Name the first record and field where ``actual`` differs from ``expected``.

    Values must match in type and value (``1`` is not ``1.0`` nor ``True``,
    ``-0.0`` is not ``0.0``).

    Returns
    -------
    str or None
        One line, for example ``record 3600, field float: expected float
        2.5e-05, got float 2.4e-05``; ``None`` when the rows are the same.
    """
    for index, (want, got) in enumerate(zip(expected, actual)):
        if len(got) != len(schema.fields):
            return f"record {index}: expected {len(schema.fields)} fields, got {len(got)}"
        for field, want_value, got_value in zip(schema.fields, want, got):
            if not _same(want_value, got_value):
                return f"record {index}, field {field.name}: expected {_show(want_value)}, got {_show(got_value)}"
    if len(expected) != len(actual):
        return f"expected {len(expected):,} records, got {len(actual):,}"
    return None


def verify_rows(
    rows: Sequence[Row],
    *,
    expected_hash: str,
    hash_rows: Callable[[Sequence[Row]], str],
    expected_rows: Callable[[], Sequence[Row]],
    difference: Callable[[Sequence[Row], Sequence[Row]], str | None],
) -> Integrity:
    """Check decoded rows against a dataset's canonical hash (outside timing).

    Parameters
    ----------
    rows
        What :meth:`Format.to_rows` returned for one decode.
    expected_hash
        The dataset's canonical hash.
    hash_rows
        The dataset's canonical hash function of rows
        (``bulkload.canonical_hash``).
    expected_rows
        Regenerates the dataset's rows; called only on a mismatch.
    difference
        Names the first differing record and field of (expected, actual):
        the dataset's own (``bulkload.first_difference``), or
        ``functools.partial(first_difference, schema)`` for any schema.

    Returns
    -------
    Integrity
        With ``detail`` set to one line on a mismatch.

    Examples
    --------
    >>> from functools import partial
    >>> rows = [(True, 1, 0.5, "A", 0)]
    >>> verify_rows(rows, expected_hash="x", hash_rows=lambda r: "y", expected_rows=lambda: [(True, 1, 0.5, "A", 1)],
    ...             difference=partial(first_difference, BULKLOAD_SCHEMA)).detail
    'record 0, field time: expected int 1, got int 0'
    """
    try:
        actual = hash_rows(rows)
        problem = None
    except (TypeError, ValueError, AttributeError, IndexError) as error:
        actual, problem = "none", f"the rows have no canonical form: {_cause(error)}"
    if actual == expected_hash:
        return Integrity(expected_hash, actual)
    detail = difference(expected_rows(), rows)
    if detail is None:
        detail = problem or "every record matches field by field, yet the hash differs; check the canonical form"
    return Integrity(expected_hash, actual, detail)
