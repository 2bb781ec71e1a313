"""The lazy entity's identity check on bytes: a stored entity's kind seen in its prefix.

Private to :mod:`stratabench.systems.lazy`; see :func:`_key_head`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from typing import Any

_bytes_startswith = bytes.startswith


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(tag: int, payload: bytes) -> bytes:
    """One length-delimited field: ``tag`` is the field number and wire type byte."""
    return bytes((tag,)) + _varint(len(payload)) + payload


def _key_head(blob: bytes, key: Any) -> bytes | None:
    """The bytes of a stored entity from its start to the end of its key's last kind, or ``None``.

    Checking an entity's kind on the parsed message builds upb wrappers for
    the key, its path and its last element: about half a microsecond, a third
    of the whole parse at 10 properties. Serializers write the key first
    (field 1), as a partition then the path, each element's kind first. When
    ``blob`` is written so, its prefix up to the last element's kind is its
    *head*, and any bytes starting with the same head hold a key of the same
    partition, the same ancestors and the same kind: the head fixes the key's
    length and the last element's length, so that element still ends the key.

    What the head does not see: a key field repeated later in the bytes (two
    serialized entities concatenated, which protobuf merges into one key with
    a longer path) and a kind repeated inside the last element after its id.
    No serializer writes either; both parse, and both pass as the first key.

    ``key`` is the parsed key of ``blob``, already checked. Returns ``None``
    when the bytes hold the key otherwise (fields out of order or repeated,
    unknown fields), so such entities are always checked on the message.
    """
    leaf = key.path[-1]
    fields = [_field(0x0A, key.partition_id.SerializeToString())] if key.HasField("partition_id") else []
    fields += [_field(0x12, element.SerializeToString()) for element in key.path]
    # Rebuilt field by field (rather than key.SerializeToString()), so that
    # unknown fields of the key make the bytes differ instead of hiding
    # where its last element starts.
    written = _field(0x0A, b"".join(fields))
    if not blob.startswith(written):
        return None
    kind_at = len(written) - len(leaf.SerializeToString())
    kind_field = _field(0x0A, leaf.kind.encode())
    if not blob.startswith(kind_field, kind_at):
        return None
    return blob[: kind_at + len(kind_field)]


def _all_start_with(blobs: Sequence[Any], heads: tuple[bytes, ...]) -> bool:
    """Whether every blob (none ``None``) starts with one of ``heads``; False when a blob has no ``startswith``."""
    try:
        if len(heads) == 1:
            # Byte strings sharing a prefix are contiguous in sorted order, so
            # when the smallest and the largest start with it, all do: two
            # C-level scans instead of a method call per blob.
            low: bytes = min(blobs)
            high: bytes = max(blobs)
            return low.startswith(heads[0]) and high.startswith(heads[0])
        return all(map(_bytes_startswith, blobs, repeat(heads)))
    except (TypeError, AttributeError):  # a memoryview, say: the caller checks one by one
        return False

