"""The JSON codec of the study: orjson when installed, else the standard library.

Used for the JSON file backend's documents, the subscription transport and
the encoded keys of per-node records; :func:`name` goes in the result
header. Callers use ``json_codec.dumps`` / ``json_codec.loads``: the codec
is imported on first use, not when ``stratabench list`` imports the study.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps", "loads", "name"]


def _standard_dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def _choose() -> tuple[Any, Any, str]:
    try:
        import orjson
    except ImportError:  # orjson is a dependency; the fallback keeps the study usable without it
        return _standard_dumps, json.loads, "json (standard library)"
    return orjson.dumps, orjson.loads, f"orjson {orjson.__version__}"


def dumps(value: Any) -> bytes:
    """Compact JSON bytes (replaced by the codec's own function on first call)."""
    _install()
    return globals()["dumps"](value)  # type: ignore[no-any-return]


def loads(data: bytes | str) -> Any:
    """Parse JSON (replaced by the codec's own function on first call)."""
    _install()
    return globals()["loads"](data)


def name() -> str:
    """The codec's name and version, for the result header."""
    return _choose()[2]


def _install() -> None:
    codec_dumps, codec_loads, _ = _choose()
    globals().update(dumps=codec_dumps, loads=codec_loads)
