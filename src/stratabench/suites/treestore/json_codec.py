"""The JSON codec of the study: orjson when installed, else the standard library.

Used for the JSON file backend's documents, the subscription transport and
the encoded keys of per-node records. :data:`NAME` goes in the result header.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["NAME", "dumps", "loads"]

dumps: Callable[[Any], bytes]
loads: Callable[[bytes | str], Any]

try:
    import orjson

    dumps = orjson.dumps
    loads = orjson.loads
    NAME = f"orjson {orjson.__version__}"
except ImportError:  # pragma: no cover -- orjson is a dependency; the fallback keeps the core importable
    def dumps(value: Any) -> bytes:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()

    loads = json.loads
    NAME = f"json (standard library)"
