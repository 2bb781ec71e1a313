"""The codec contract: formats of a record schema (:mod:`stratabench.datasets.schema`).

A *codec* (one plugin module each, registered in
:data:`stratabench.layers.codecs.CODECS`) turns a list of records of one
:class:`Schema` into bytes and back. ``Codec().format(schema, mode)`` builds
a :class:`Format`, once and outside any timed region; it holds everything
that can be prepared ahead (decoders, Struct and message classes, compiled
conversion functions), so that :meth:`Format.decode` - the call suites time
- does only the work of loading.

Rows are tuples in field order, the canonical Python form of a record
(``BulkRecord`` is such a tuple); :mod:`stratabench.datasets.schema` lists
the canonical value of each field type.

A single record (the cache suite's ``article``) is a list of one row: there
is no separate single-record API.

Modes name what ``decode`` hands back: ``typed`` gives typed records
(tuples, dataclasses, msgspec Structs, protobuf messages) with time as
integer nanoseconds; ``raw`` gives the codec's natural objects (dicts with
RFC3339Nano strings for the JSON codecs). :meth:`Format.to_rows` converts
either back to canonical rows, outside timing, for hashing; the dataset's
canonical hash of those rows is the integrity check
(:func:`stratabench.datasets.verify.verify_rows`).

Errors: library exceptions raised while encoding, decoding or converting
become :class:`~stratabench.errors.DataError` here, in the base class, so a
truncated or corrupt input fails a cell with one line whatever the codec.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Literal

from stratabench.datasets.schema import Row, Schema
from stratabench.datasets.verify import one_line_cause
from stratabench.errors import DataError, StratabenchError, UnavailableError, UsageError

__all__ = [
    "Codec",
    "Format",
    "FunctionFormat",
    "json_value",
    "row_converter",
    "thawed_rows",
    "tuple_rows",
]


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
    lazy
        Whether ``decode`` only parses (or maps) the bytes and builds each
        record's Python values on first read (protobuf's upb, Arrow, simdjson's
        on-demand documents, FlatBuffers). A lazy format's decode time is then
        no load time: suites also time :meth:`access` (one field of every
        record) and :meth:`to_rows` (every field), the figure every format can
        be held to.
    decodes_own_encoding
        Whether ``decode`` needs this very object's ``encode`` to have run
        first (files it wrote, a module it loaded: embed's modes). Bytes
        another object of the same codec and mode encoded then cannot stand
        in, so a suite that keeps an encoded asset for the run's later
        visits (:mod:`stratabench.run_shared`) encodes such a format's anew.
    """

    resident: bool = False
    lazy: bool = False
    decodes_own_encoding: bool = False

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
            raise DataError(f"{self.label}: cannot encode {len(rows):,} {self.schema.name} rows: {one_line_cause(error)}") from error

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
                f"(truncated, corrupt or another format?): {one_line_cause(error)}"
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
            raise DataError(f"{self.label}: decoded value is not a list of {self.schema.name} records: {one_line_cause(error)}") from error

    def access(self, decoded: object) -> object:
        """Read one field of every record of what :meth:`decode` returned: a lazy format's middle row.

        For an eager format the records are already built, so this is what
        any reader pays for touching them; a lazy format overrides
        ``_access`` to read through its own accessors. Returns the values read
        (so nothing is optimised away and the caller can check them).

        Raises
        ------
        DataError
            If the decoded value does not have the schema's shape.
        """
        try:
            return self._access(decoded)
        except StratabenchError:
            raise
        except Exception as error:
            raise DataError(f"{self.label}: cannot read a field of every record: {one_line_cause(error)}") from error

    def _access(self, decoded: Any) -> object:
        # The first field of each canonical row: correct for every format,
        # and the same work as ``to_rows`` for those whose decoded records
        # are rows already.
        return [row[0] for row in self._to_rows(decoded)]

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
        access: Callable[[Any], object] | None = None,
    ) -> None:
        super().__init__(codec, schema, mode, exact=exact)
        # Instance attributes shadow the methods below, so the public
        # wrappers call the given functions with no extra frame between.
        self._encode = encode  # type: ignore[method-assign, assignment]
        self._decode = decode  # type: ignore[method-assign, assignment]
        self._to_rows = to_rows  # type: ignore[method-assign, assignment]
        if access is not None:
            # A lazy format's own accessor: one field per record, read the way a user would.
            self.lazy = True
            self._access = access  # type: ignore[method-assign, assignment]

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
    #: Modes whose formats are lazy (:attr:`Format.lazy`), known without building a format.
    lazy_modes: ClassVar[tuple[str, ...]] = ()
    #: Whether the library spreads a call's work over a thread pool of its own (pyarrow's Parquet reader):
    #: the calling thread's CPU time then leaves part of the work out, so suites judge its cells on wall time.
    threaded: ClassVar[bool] = False
    #: Why the codec's encode is not timed as its own (empty: it is): a decoder-only library that
    #: borrows another's encoder, or a build that is reported as build costs instead.
    no_encode_row: ClassVar[str] = ""
    #: Why the codec is no codec for one value at a time (empty: it is), so suites that store values
    #: (matrix) leave it out of their defaults and say why.
    not_for_values: ClassVar[str] = ""

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
