"""What the clients write: one payload per key, from the user's records or generated.

A payload is the bytes a key holds below its integrity stamp
(:mod:`stratabench.load.integrity` adds :data:`STAMP_BYTES` in front), so a
value in the store is ``STAMP_BYTES + len(payload)`` bytes long.

- :func:`payloads_from_rows`: the user's own records (read by
  :func:`stratabench.datasets.userfile.load_records`), or any dataset's,
  each encoded alone by a codec (``json`` by default), one record per key.
- :func:`generated_payloads`: ``count`` pseudo-random payloads of a fixed
  size, a pure function of ``(count, size, seed)``, as YCSB's generated
  records.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from stratabench.errors import UsageError
from stratabench.datasets.schema import Row, Schema
from stratabench.layers.codecs import make_format
from stratabench.load.integrity import STAMP_BYTES

__all__ = ["STAMP_BYTES", "generated_payloads", "payloads_from_rows"]


def generated_payloads(count: int, size: int, seed: int = 1) -> tuple[bytes, ...]:
    """``count`` payloads of ``size`` pseudo-random bytes each, the same for the same arguments.

    Raises
    ------
    UsageError
        For a count below one or a negative size.
    """
    if count < 1:
        raise UsageError(f"--records must be at least 1, not {count}")
    if size < 0:
        raise UsageError(f"--value-size must be zero or more bytes, not {size}")
    rng = random.Random(seed)
    return tuple(rng.randbytes(size) for _ in range(count))


def payloads_from_rows(schema: Schema, rows: Sequence[Row], codec: str = "json") -> tuple[bytes, ...]:
    """Each row encoded alone by ``codec``: the payload of one key per record."""
    encoder = make_format(codec, schema)
    return tuple(encoder.encode([row]) for row in rows)
