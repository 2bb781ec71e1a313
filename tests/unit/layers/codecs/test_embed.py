"""Tests of the embed codec's three loads (stratabench.layers.codecs.embed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stratabench.datasets.bulkload import canonical_hash, generate, BULKLOAD_SCHEMA
from stratabench.errors import DataError, UsageError
from stratabench.layers.codecs import make_format
from stratabench.layers.codecs.embed import EmbedFormat, python_literal

ROWS = generate(50, 100)


def embed(mode: str, workdir: Path) -> EmbedFormat:
    fmt = make_format("embed", BULKLOAD_SCHEMA, mode, workdir=workdir)
    assert isinstance(fmt, EmbedFormat)
    return fmt


def test_needs_an_existing_work_directory(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="give format\\(\\) a workdir"):
        make_format("embed", BULKLOAD_SCHEMA, "compile")
    with pytest.raises(UsageError, match="does not exist"):
        make_format("embed", BULKLOAD_SCHEMA, "compile", workdir=tmp_path / "missing")


def test_the_source_is_one_constant_list(tmp_path: Path) -> None:
    fmt = embed("compile", tmp_path)
    source = fmt.encode(ROWS)
    code = compile(source, "embed", "exec")
    # The records are folded into one constant tuple the list is built from.
    constants = [c for c in code.co_consts if isinstance(c, tuple) and len(c) == len(ROWS)]
    assert constants and constants[0][0] == tuple(ROWS[0])
    assert fmt.source_path is not None and fmt.source_path.read_bytes() == source
    assert fmt.bytecode_path is None


def test_compile_never_uses_a_bytecode_cache(tmp_path: Path) -> None:
    fmt = embed("compile", tmp_path)
    source = fmt.encode(ROWS)
    first, second = fmt.decode(source), fmt.decode(source)
    assert first == second and first is not second
    assert canonical_hash(fmt.to_rows(first)) == canonical_hash(ROWS)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{fmt.module_name}.py"]


@pytest.mark.parametrize("dont_write", [True, False])
def test_cached_loads_its_own_bytecode_whatever_the_interpreter_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dont_write: bool
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", dont_write)
    fmt = embed("cached", tmp_path)
    bytecode = fmt.encode(ROWS)
    assert fmt.bytecode_path is not None and fmt.bytecode_path.read_bytes() == bytecode
    assert bytecode[:4] == __import__("importlib.util").util.MAGIC_NUMBER
    assert canonical_hash(fmt.to_rows(fmt.decode(bytecode))) == canonical_hash(ROWS)
    assert not (tmp_path / "__pycache__").exists()


def test_cached_refuses_source_and_bytecode_of_another_python(tmp_path: Path) -> None:
    fmt = embed("cached", tmp_path)
    bytecode = fmt.encode(ROWS)
    with pytest.raises(DataError, match="embed/cached: cannot decode"):
        fmt.decode(b"\x00\x00\r\n" + bytecode[4:])


def test_resident_is_an_attribute_read_of_one_list(tmp_path: Path) -> None:
    fmt = embed("resident", tmp_path)
    source = fmt.encode(ROWS)
    first = fmt.decode(source)
    assert fmt.decode(source) is first
    assert fmt.decode(bytes(source)) is first  # equal bytes are the same asset
    assert canonical_hash(fmt.to_rows(first)) == canonical_hash(ROWS)
    for other in (source[:-1], b"X" + source[1:], source[:-1] + b"X"):
        with pytest.raises(DataError, match="not the bytes this format encoded"):
            fmt.decode(other)


def test_python_literal_keeps_every_value() -> None:
    values = [0.1, -0.0, 5e-324, 1e21, float("inf"), float("-inf"), "é\n'\"", b"\x00'", None, True, [1, {"a": (2,)}]]
    for value in values:
        assert repr(eval(python_literal(value))) == repr(value)
    nan = eval(python_literal(float("nan")))
    assert nan != nan
    with pytest.raises(TypeError, match="no literal for a set"):
        python_literal({1})


def test_the_compiled_module_is_reused_from_the_build_cache_unless_rebuilding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import py_compile

    from stratabench.build_cache import CACHE_DIR_ENV

    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    (tmp_path / "one").mkdir()
    built = embed("cached", tmp_path / "one").encode(ROWS)
    assert len(list((tmp_path / "cache" / "py-embed").glob("*.pyc"))) == 1

    def no_compiler(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled although the build cache holds this module")

    monkeypatch.setattr(py_compile, "compile", no_compiler)
    (tmp_path / "two").mkdir()
    again = embed("cached", tmp_path / "two")
    assert again.encode(ROWS) == built
    assert canonical_hash(again.to_rows(again.decode(built))) == canonical_hash(ROWS)

    other = generate(51, 100)  # other records: another key, so a compile
    (tmp_path / "three").mkdir()
    with pytest.raises(DataError, match="compiled although"):
        embed("cached", tmp_path / "three").encode(other)
    rebuild = embed("resident", tmp_path / "two")
    rebuild.reuse_builds = False
    with pytest.raises(DataError, match="compiled although"):
        rebuild.encode(ROWS)
