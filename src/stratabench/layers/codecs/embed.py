"""The ``embed`` codec: the records as a generated Python module, loaded as code.

Needs nothing beyond the standard library, and a work directory of the
caller's own (``Codec.format(..., workdir=...)``; without one ``format``
raises ``UsageError``). The Python analog of the Go adapter's ``embed``
format (docs/studies/bulkload.md sections 4.1 and 4.2): ``encode`` writes a module
whose body is one assignment, ``RECORDS = [...]``, a list literal of row
tuples. CPython folds such a literal into a single constant tuple in the
bytecode, so loading is unmarshalling plus one list copy.

Each mode is one of the study's three loads (docs/studies/bulkload.md §4.2), always through importlib
machinery (a spec, a loader, ``exec_module``) and never ``import``, because
a second import of the same name is a no-op that measures nothing:

- ``compile``: source to module: ``encode`` returns the source; ``decode``
  compiles it and runs the module through a source loader that never reads
  or writes a bytecode cache.
- ``cached``: ``encode`` writes the source and its bytecode, made with
  :func:`py_compile.compile` into the work directory (not ``__pycache__``:
  with ``PYTHONDONTWRITEBYTECODE`` set, the import system would otherwise
  silently recompile every time), and returns the ``.pyc`` bytes; ``decode``
  runs them through a sourceless loader.
- ``resident``: ``encode`` writes both files and loads the module once;
  ``decode`` reads the module's attribute: Go's 0.3 ns analog. It returns
  the same list every time, and refuses bytes that are plainly not the ones
  its ``encode`` returned (another length, start or end: a constant-time
  check). Reading the asset file before such a load is no part of it.

``decode`` takes the bytes ``encode`` returned, as every codec does, rather
than re-reading the files, so whether reading the asset from disk is part of
the timed operation is the suite's choice for all codecs alike. The files
stay in the work directory (:attr:`EmbedFormat.source_path`,
:attr:`EmbedFormat.bytecode_path`) for sizes and compile metrics.

Values: ``time_ns`` is an integer, ``time_us`` integer microseconds (a
``datetime`` call would not be a constant), lists are tuples; ``to_rows``
converts back. Non-finite floats are spelled as constant expressions
(``1e999``).

What it cannot do: be cheap to build. At 100,000 bulkload records the source
is about 15 MB and compiling it takes seconds and hundreds of megabytes;
bytecode is tied to the Python version.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import hashlib
import itertools
import os
import py_compile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from stratabench.build_cache import cache_root
from stratabench.datasets.schema import Row, Schema, datetime_from_us, us_from_datetime
from stratabench.errors import DataError, UsageError
from stratabench.layers.codecs import CODECS
from stratabench.layers.codecs.base import Codec, Format, row_converter

__all__ = ["EmbedCodec", "EmbedFormat", "python_literal"]

_VARIABLE = "RECORDS"
_NAMES = itertools.count()
_NON_FINITE = {"inf": "1e999", "-inf": "-1e999", "nan": "(1e999 - 1e999)"}


def python_literal(value: Any) -> str:
    """Spell a canonical value as a Python expression the compiler folds.

    Floats keep every bit (``repr``) and non-finite ones become constant
    expressions, so a tuple of scalars stays one constant of the bytecode;
    lists and dicts (``any`` values) are built when the module runs.
    """
    if isinstance(value, float):
        text = repr(value)
        return _NON_FINITE.get(text, text)
    if isinstance(value, tuple):
        return "(" + "".join(python_literal(item) + ", " for item in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_literal(key)}: {python_literal(item)}" for key, item in value.items()) + "}"
    if value is None or isinstance(value, (bool, int, str, bytes)):
        return repr(value)
    raise TypeError(f"no literal for a {type(value).__name__} value {value!r:.40}")


class _MemorySourceLoader(importlib.abc.SourceLoader):
    """A source loader over bytes in memory, with no bytecode cache at all.

    ``SourceLoader.get_code`` looks for a cache only when ``path_stats``
    works; it is left unimplemented, so every load compiles.
    """

    def __init__(self, path: str, source: bytes) -> None:
        self.path = path
        self.source = source

    def get_filename(self, fullname: str) -> str:
        return self.path

    def get_data(self, path: str) -> bytes:
        if path != self.path:
            raise OSError(f"no such file in memory: {path}")
        return self.source


class _MemorySourcelessLoader(importlib.machinery.SourcelessFileLoader):
    """The standard sourceless (``.pyc``) loader, reading the bytes given."""

    def __init__(self, fullname: str, path: str, bytecode: bytes) -> None:
        super().__init__(fullname, path)
        self.bytecode = bytecode

    def get_data(self, path: str) -> bytes:
        if path != self.path:
            raise OSError(f"no such file in memory: {path}")
        return self.bytecode


def _run_module(name: str, loader: importlib.abc.Loader) -> Any:
    spec = importlib.util.spec_from_loader(name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return getattr(module, _VARIABLE)


class EmbedFormat(Format):
    """The records of one schema as a generated module, in one load mode.

    Attributes
    ----------
    workdir
        Where the module's files are written.
    module_name
        The generated module's name (unique in this process).
    source_path, bytecode_path
        The files written by :meth:`encode` (``bytecode_path`` is ``None``
        in ``compile`` mode); ``None`` before ``encode``.
    """

    #: ``decode`` loads through the files ``encode`` wrote (and, resident, the module it loaded).
    decodes_own_encoding = True

    def __init__(self, codec: str, schema: Schema, mode: str, workdir: Path) -> None:
        super().__init__(codec, schema, mode)
        self.resident = mode == "resident"
        self.workdir = workdir
        self.module_name = f"stratabench_embed_{schema.name}_{mode}_{next(_NAMES)}"
        self.source_path: Path | None = None
        self.bytecode_path: Path | None = None
        self._namespace = {"_us": us_from_datetime, "_datetime": datetime_from_us}
        self._to_embedded = row_converter(
            schema,
            convert={"time_us": "_us({})", "list_str": "tuple({})", "list_int": "tuple({})"},
            namespace=self._namespace,
        )
        self._to_rows_of = row_converter(
            schema,
            convert={"time_us": "_datetime({})", "list_str": "list({})", "list_int": "list({})"},
            namespace=self._namespace,
        )
        self._resident: Any = None
        self._asset: bytes | None = None
        #: Whether the compiled module may come from the build cache (see :meth:`_bytecode`).
        self.reuse_builds = True
        self._load: Callable[[bytes], object] = {
            "compile": self._compile,
            "cached": self._cached,
            "resident": self._read_resident,
        }[mode]

    def source(self, rows: Sequence[Row]) -> bytes:
        """The module's source for ``rows`` (what ``compile`` mode loads)."""
        lines = [
            f"# Generated by stratabench's embed codec: {len(rows)} {self.schema.name} records. Do not edit.",
            f"{_VARIABLE} = [",
        ]
        lines.extend(python_literal(row) + "," for row in self._to_embedded(rows))
        lines.append("]")
        return ("\n".join(lines) + "\n").encode("utf-8")

    def _encode(self, rows: Sequence[Row]) -> bytes:
        source = self.source(rows)
        self.source_path = self.workdir / f"{self.module_name}.py"
        self.source_path.write_bytes(source)
        if self.mode == "compile":
            self._asset = source
            return source
        self.bytecode_path = self.workdir / f"{self.module_name}.pyc"
        bytecode = self._bytecode(source)
        if self.mode == "cached":
            self._asset = bytecode
            return bytecode
        self._resident = self._cached(bytecode)
        self._asset = source
        return source

    def _bytecode(self, source: bytes) -> bytes:
        """Compile the module to ``bytecode_path``, or copy its build from the build cache.

        Compiling the study's 15 MB source takes seconds, and two cells (cached,
        resident) need it only as their untimed set-up. The build cache keys it
        by the source's bytes and the interpreter's bytecode magic, so a reused
        build is exactly what compiling would make. ``reuse_builds = False``
        (``run --rebuild``) compiles anew; the compile load itself is always
        timed from source.
        """
        assert self.source_path is not None and self.bytecode_path is not None
        key = hashlib.sha256(importlib.util.MAGIC_NUMBER + source).hexdigest()[:24]
        kept = cache_root() / "py-embed" / f"{key}.pyc"
        if self.reuse_builds and kept.is_file():
            bytecode = kept.read_bytes()
            self.bytecode_path.write_bytes(bytecode)
            return bytecode
        py_compile.compile(str(self.source_path), cfile=str(self.bytecode_path), doraise=True)
        bytecode = self.bytecode_path.read_bytes()
        try:
            kept.parent.mkdir(parents=True, exist_ok=True)
            partial = kept.with_suffix(f".{os.getpid()}.partial")
            partial.write_bytes(bytecode)
            partial.replace(kept)  # whole or absent: a killed run leaves no half-written build
        except OSError:
            pass  # a read-only or full cache costs the next run a compile, nothing more
        return bytecode

    def _compile(self, data: bytes) -> object:
        return _run_module(self.module_name, _MemorySourceLoader(str(self.source_path), data))

    def _cached(self, data: bytes) -> object:
        path = str(self.bytecode_path)
        return _run_module(self.module_name, _MemorySourcelessLoader(self.module_name, path, data))

    def _read_resident(self, data: bytes) -> object:
        asset = self._asset
        # A cheap identity check, not an integrity check (the hash does
        # that): comparing every byte would make the load O(size).
        if data is not asset and (
            asset is None or len(data) != len(asset) or data[:64] != asset[:64] or data[-64:] != asset[-64:]
        ):
            raise DataError(f"{self.label}: these are not the bytes this format encoded; a resident load has no others")
        return self._resident

    def _decode(self, data: bytes) -> object:
        return self._load(data)

    def _to_rows(self, decoded: Any) -> list[Row]:
        if not isinstance(decoded, list):
            raise TypeError(f"expected the module's list, got {type(decoded).__name__}")
        return self._to_rows_of(decoded)


@CODECS.register("embed")
class EmbedCodec(Codec):
    """Records as a generated Python module: compile, cached and resident loads."""

    no_encode_row = "its encode writes and compiles a module: a build, reported as the compile row and build costs"
    modes = ("compile", "cached", "resident")
    not_for_values = "it generates and compiles a Python module per value: a whole-dataset load format"

    def _format(self, schema: Schema, mode: str, workdir: Path | None) -> Format:
        if workdir is None:
            raise UsageError(f"{self.name}/{mode} writes a module and its bytecode: give format() a workdir")
        if not workdir.is_dir():
            raise UsageError(f"{self.name}/{mode}: work directory {workdir} does not exist; create it first")
        return EmbedFormat(self.name, schema, mode, workdir)
