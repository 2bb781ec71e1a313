"""Every registered compressor: exact round trips, levels recorded, bad levels refused."""

from __future__ import annotations

import os

import pytest

from stratabench.errors import UsageError
from stratabench.layers.compressors import COMPRESSORS
from stratabench.layers.compressors.base import Compressor
from stratabench.options import RunOptions
from tests.availability import unavailable

TEXT = b"the quick brown fox jumps over the lazy dog. " * 2000
SAMPLES = [b"", b"x", os.urandom(100_000), TEXT, bytes(range(256)) * 50]


@pytest.fixture(params=COMPRESSORS.names)
def compressor(request: pytest.FixtureRequest) -> Compressor:
    info = COMPRESSORS.info(request.param)
    if not info.availability.ok:
        unavailable(f"compressor {info.name}: {info.availability.reason}")
    made: Compressor = info.cls()
    return made


def test_every_compressor_is_covered() -> None:
    assert set(COMPRESSORS.names) == {"none", "zlib", "zstd", "lz4"}


@pytest.mark.parametrize("sample", SAMPLES, ids=["empty", "one", "random", "text", "bytes"])
def test_round_trip(compressor: Compressor, sample: bytes) -> None:
    compressed = compressor.compress(sample)
    assert isinstance(compressed, bytes)
    assert compressor.decompress(compressed) == sample


def test_text_shrinks(compressor: Compressor) -> None:
    if compressor.name == "none":
        assert compressor.compress(TEXT) == TEXT
    else:
        assert len(compressor.compress(TEXT)) < len(TEXT) / 2


def test_level_is_recorded(compressor: Compressor) -> None:
    assert compressor.notes == {"compressor": compressor.name, "level": compressor.level}
    expected = {"none": None, "zlib": 6, "zstd": 3, "lz4": 0}[compressor.name]
    assert compressor.level == expected


def test_level_from_settings_and_bad_levels() -> None:
    zlib = COMPRESSORS.get("zlib")
    assert zlib.from_options(RunOptions(settings={"zlib.level": "9"})).level == 9
    assert zlib.from_options(None).level == 6
    with pytest.raises(UsageError):
        zlib(level=42)
    with pytest.raises(UsageError):
        zlib.from_options(RunOptions(settings={"zlib.level": "high"}))
    with pytest.raises(UsageError):
        COMPRESSORS.get("none")(level=1)
