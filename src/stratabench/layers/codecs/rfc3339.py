"""RFC 3339 times with nanoseconds, as integer nanoseconds since the epoch.

Text codecs (json, orjson, msgspec.json in raw mode) carry a ``time_ns``
field as Go's ``time.RFC3339Nano`` spelling, and their typed modes must turn
it back into an integer without passing through ``datetime``, which stops at
microseconds. :func:`parse_rfc3339nano` is on the timed path of those
decoders, so its common case (UTC, ``Z``) is a few C calls; other offsets
take a slower, equally exact path. Writing reuses the project's canonical
spelling (:func:`stratabench.datasets.canonical.rfc3339nano`).

What it cannot do: leap seconds (``:60``), years outside 1 to 9999, and
lowercase ``t``/``z`` separators are refused, as Go's RFC 3339 layout
refuses them.
"""

from __future__ import annotations

import re
from datetime import date, datetime

from stratabench.datasets.canonical import rfc3339nano

__all__ = ["format_rfc3339nano", "parse_rfc3339nano"]

_NS_PER_SECOND = 1_000_000_000
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_fromisoformat = datetime.fromisoformat
# Nanoseconds per unit of the last written fraction digit, by digit count.
_FRACTION_SCALE = tuple(10 ** (9 - digits) for digits in range(10))
_RFC3339 = re.compile(
    r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(?:(Z)|([+-])(\d{2}):(\d{2}))",
    re.ASCII,
)


def format_rfc3339nano(ns: int) -> str:
    """Spell an instant (integer nanoseconds since the epoch) as Go does in UTC.

    ``2000-08-02T03:28:02.028350735Z``; trailing fraction zeros are dropped
    and a whole second has no fraction at all.

    Raises
    ------
    ValueError
        If the year falls outside 0 to 9999.
    """
    seconds, nanos = divmod(ns, _NS_PER_SECOND)
    return rfc3339nano(seconds, nanos)


def parse_rfc3339nano(text: str) -> int:
    """Read an RFC 3339 time with up to nine fraction digits, exactly.

    Parameters
    ----------
    text
        ``YYYY-MM-DDTHH:MM:SS``, an optional fraction of 1 to 9 digits, then
        ``Z`` or an offset ``+HH:MM``/``-HH:MM``.

    Returns
    -------
    int
        Nanoseconds since 1970-01-01T00:00:00Z.

    Raises
    ------
    ValueError
        If ``text`` is not such a time.
    """
    try:
        n = len(text)
        if text[n - 1] == "Z" and text[10] == "T" and (n == 20 or (text[19] == "." and 21 < n < 31)):
            clock = _fromisoformat(text[:19])
            if n == 20:
                fraction = 0
            else:
                digits = text[20 : n - 1]
                if not (digits.isascii() and digits.isdigit()):
                    raise ValueError(digits)
                fraction = int(digits) * _FRACTION_SCALE[n - 21]
            seconds = (
                (clock.toordinal() - _EPOCH_ORDINAL) * 86_400 + clock.hour * 3600 + clock.minute * 60 + clock.second
            )
            return seconds * _NS_PER_SECOND + fraction
    except (ValueError, IndexError, TypeError):
        pass
    return _parse_general(text)


def _parse_general(text: object) -> int:
    """The exact path for offsets other than ``Z``; also names bad input."""
    match = _RFC3339.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"not an RFC 3339 time with nanoseconds: {text!r:.60}")
    clock_text, digits, zulu, sign, hours, minutes = match.groups()
    try:
        clock = _fromisoformat(clock_text)
    except ValueError:
        raise ValueError(f"not a valid date and time: {text!r:.60}") from None
    seconds = (clock.toordinal() - _EPOCH_ORDINAL) * 86_400 + clock.hour * 3600 + clock.minute * 60 + clock.second
    if not zulu:
        offset = int(hours) * 3600 + int(minutes) * 60
        seconds -= offset if sign == "+" else -offset
    fraction = int(digits) * _FRACTION_SCALE[len(digits)] if digits else 0
    return seconds * _NS_PER_SECOND + fraction
