"""Correctness under load: every value carries its key, a version and a hash.

YCSB's data-integrity mode regenerates each value from its key and compares
on read (``verifyRow`` in pingcap/go-ycsb ``pkg/workload/core.go``). Here a
value is stamped::

    b"SBL1" | key number (8 bytes) | version (8 bytes) | digest (8 bytes) | payload

where the digest is the first 8 bytes of SHA-1 over the key number, the
version and the payload. Each client writes only the keys it owns, so it
knows the exact version every one of its keys must hold; a read must return
those exact bytes. Anything else is a failed check, classified for the
report: the key is missing, the value was not written by this run, belongs
to another key, is an older version (a lost update), or does not hash (it
was changed behind the clients' back).

After a ``put`` that failed, the server may or may not have applied it, so
both the old and the new version are accepted until the next read settles
which one the key holds.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field

__all__ = ["STAMP_BYTES", "CheckFailures", "KeyLedger", "stamp", "what_is_wrong"]

MAGIC = b"SBL1"
_KEY_VERSION = struct.Struct(">QQ")
_HEADER = struct.Struct(">QQ8s")
_HEADER_END = len(MAGIC) + _HEADER.size
STAMP_BYTES = _HEADER_END
"""Bytes a stamp adds in front of a payload."""


def _digest(key_number: int, version: int, payload: bytes) -> bytes:
    return hashlib.sha1(_KEY_VERSION.pack(key_number, version) + payload).digest()[:8]


def stamp(key_number: int, version: int, payload: bytes) -> bytes:
    """The value that version ``version`` of key ``key_number`` holds."""
    return MAGIC + _HEADER.pack(key_number, version, _digest(key_number, version, payload)) + payload


def what_is_wrong(value: bytes | None, key_number: int, version: int) -> str:
    """Why ``value`` is not version ``version`` of key ``key_number`` (one phrase)."""
    if value is None:
        return "the key is missing"
    if len(value) < _HEADER_END or not value.startswith(MAGIC):
        return f"a {len(value)}-byte value this run did not write"
    number, found_version, digest = _HEADER.unpack_from(value, len(MAGIC))
    payload = value[_HEADER_END:]
    if digest != _digest(number, found_version, payload):
        return "the value does not match its hash (changed behind the clients' back)"
    if number != key_number:
        return f"the value of key {number}"
    if found_version < version:
        return f"version {found_version}, older than the {version} last written (a lost update)"
    return f"version {found_version}, expected {version}"


@dataclass
class CheckFailures:
    """Failed checks of one client: how many, and the first one in words."""

    count: int = 0
    first: str | None = None

    def add(self, key: bytes, reason: str) -> None:
        """Count a value of ``key`` that was not as written."""
        self.note(f"key {key.decode('ascii', 'replace')}: {reason}")

    def note(self, what: str) -> None:
        """Count a wrong answer of any kind (a service's), described by ``what``."""
        self.count += 1
        if self.first is None:
            self.first = what


@dataclass
class KeyLedger:
    """What each of a client's keys must hold: its version and exact bytes.

    Attributes
    ----------
    numbers
        The global number of each of the client's keys (stamped into values).
    payloads
        The payload of each key, the same for every version.
    """

    numbers: list[int]
    payloads: list[bytes]
    versions: list[int] = field(init=False)
    expected: list[bytes] = field(init=False)
    _either: dict[int, bytes] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.versions = [0] * len(self.numbers)
        self.expected = [stamp(n, 0, p) for n, p in zip(self.numbers, self.payloads, strict=True)]

    def next_value(self, index: int) -> bytes:
        """The value of key ``index``'s next version (not yet accepted: see :meth:`written`)."""
        return stamp(self.numbers[index], self.versions[index] + 1, self.payloads[index])

    def written(self, index: int, value: bytes, *, certain: bool) -> None:
        """Record that :meth:`next_value` was put, or, with ``certain=False``, may have been."""
        if not certain:
            self._either[index] = self.expected[index]
        self.versions[index] += 1
        self.expected[index] = value

    def check(self, index: int, value: bytes | None) -> str | None:
        """``None`` when ``value`` is what key ``index`` must hold, else why not."""
        if value == self.expected[index]:
            self._either.pop(index, None)
            return None
        previous = self._either.pop(index, None)
        if previous is not None and value == previous:
            self.versions[index] -= 1
            self.expected[index] = previous
            return None
        return what_is_wrong(value, self.numbers[index], self.versions[index])
