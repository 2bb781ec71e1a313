"""Tests of reading the Go adapter's bulkload assets (stratabench.layers.codecs.go_assets).

The golden files are 10-record assets written by ``stratabench-go export
--seed 100 --size 10``; a slow test also reads 1,000 records freshly
exported by the Go program.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from stratabench.datasets.bulkload import REFERENCE_HASHES, canonical_hash, generate
from stratabench.errors import DataError, UsageError
from stratabench.layers.codecs.go_assets import GO_ASSET_CODECS, SAME_WIRE, decode_go_asset

GOLDEN = Path(__file__).parents[3] / "golden" / "go_assets"


@pytest.mark.parametrize("fmt", GO_ASSET_CODECS)
def test_reads_each_golden_go_asset(fmt: str) -> None:
    rows = decode_go_asset(fmt, (GOLDEN / f"bulkload-10-100.{fmt}").read_bytes())
    assert canonical_hash(rows) == REFERENCE_HASHES[(10, 100)]
    assert rows == generate(10, 100)


def test_the_json_asset_is_the_canonical_form() -> None:
    from stratabench.datasets.bulkload import canonical_bytes

    assert (GOLDEN / "bulkload-10-100.json").read_bytes() == canonical_bytes(generate(10, 100))


def test_unreadable_formats_and_corrupt_assets_are_explained() -> None:
    with pytest.raises(UsageError, match="cannot read Go's 'gob' asset in Python; readable: json, msgpack, msgp, cbor"):
        decode_go_asset("gob", b"")
    data = (GOLDEN / "bulkload-10-100.msgp").read_bytes()
    with pytest.raises(DataError, match=r"^msgpack/go-msgp: cannot decode 608 bytes as bulkload records"):
        decode_go_asset("msgp", data[:608])


@pytest.mark.slow
@pytest.mark.parametrize("fmt", [*GO_ASSET_CODECS, *SAME_WIRE])
def test_reads_fresh_exports_of_the_go_program(fmt: str, tmp_path: Path, go_program: Callable[[str], Path]) -> None:
    from stratabench.adapters import golang

    go_program("stratabench-go")
    path = golang.export(fmt, 100, 1000, tmp_path / f"asset.{fmt}")
    assert canonical_hash(decode_go_asset(fmt, path.read_bytes())) == REFERENCE_HASHES[(1000, 100)]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", [*GO_ASSET_CODECS, *SAME_WIRE])
def test_go_reads_what_python_wrote(fmt: str, tmp_path: Path, go_program: Callable[[str], Path]) -> None:
    """The other half of one hash across languages: each file Python's codec writes, Go decodes to the hash."""
    from stratabench.adapters import golang
    from stratabench.datasets.bulkload import BULKLOAD_SCHEMA
    from stratabench.layers.codecs import make_format

    go_program("stratabench-go")
    codec, mode = GO_ASSET_CODECS[SAME_WIRE.get(fmt, fmt)]
    path = tmp_path / f"python.{fmt}"
    path.write_bytes(make_format(codec, BULKLOAD_SCHEMA, mode).encode(generate(1000, 100)))
    assert golang.decode_hash(fmt, path) == REFERENCE_HASHES[(1000, 100)]


@pytest.mark.slow
def test_a_file_that_dropped_the_nanoseconds_hashes_otherwise_in_go(tmp_path: Path,
                                                                    go_program: Callable[[str], Path]) -> None:
    """A writer that keeps microseconds only (as a datetime path does) is caught by the hash on the other side."""
    from stratabench.adapters import golang
    from stratabench.datasets.bulkload import BULKLOAD_SCHEMA
    from stratabench.layers.codecs import make_format

    go_program("stratabench-go")
    rows = generate(1000, 100)
    truncated = [(*row[:4], row[4] // 1000 * 1000) for row in rows]
    assert truncated != rows, "the dataset has sub-microsecond times"
    path = tmp_path / "python.cbor"
    path.write_bytes(make_format("cbor2", BULKLOAD_SCHEMA, "typed").encode(truncated))
    assert golang.decode_hash("cbor", path) == canonical_hash(truncated) != REFERENCE_HASHES[(1000, 100)]
