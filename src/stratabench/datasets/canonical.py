"""Canonical forms and the one hash function of stratabench, stdlib only.

A dataset's canonical form is the exact byte string a reference encoder
writes for it; its SHA-1 is what every codec's decode path must reproduce.
For the Go-born datasets the reference is Go's ``encoding/json``, so this
module spells values the way Go does. Dataset modules (bulkload, entities,
cache, ...) build their own canonical forms from these helpers.

What it cannot do: it writes Go's defaults only (HTML-safe escaping, UTC
times with ``Z``); ``SetEscapeHTML(false)``, ``MarshalIndent`` and local time
offsets are not modelled.
"""

from __future__ import annotations

import hashlib
import re
from datetime import date, datetime

__all__ = [
    "format_rfc3339nano",
    "parse_rfc3339nano",
    "go_json_float",
    "go_json_string",
    "rfc3339nano",
    "sha1_hex",
]

_NANOS_PER_SECOND = 1_000_000_000
_SECONDS_PER_DAY = 86_400

# What Go's encoder escapes in its default (HTML-safe) mode, plus lone
# surrogates, which a Python str can hold but UTF-8 cannot.
_ESCAPED = re.compile('[\x00-\x1f"\\\\<>&\u2028\u2029\ud800-\udfff]')
_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    # Go 1.22 and later; older Go wrote \u0008 and \u000c.
    "\b": "\\b",
    "\f": "\\f",
}


def sha1_hex(data: bytes) -> str:
    """Return the SHA-1 of ``data`` as 40 lowercase hex digits.

    The project's dataset hash. SHA-1 is kept because the published Go
    reference hashes use it; it guards against mistakes, not adversaries.
    """
    return hashlib.sha1(data).hexdigest()


def go_json_float(x: float) -> str:
    """Spell a binary64 value the way Go's ``encoding/json`` writes a float64.

    The digits are the shortest that read back as ``x`` (Python's ``repr``
    digits). Magnitudes in [1e-6, 1e21) and zero are written positionally
    without trailing zeros or a trailing point (``1``, ``-0``,
    ``0.000025686020322490677``); others use an exponent of at least two
    digits, except that a negative exponent drops its leading zero
    (``1e+21``, ``1.5e-7``, ``5e-324``).

    Raises
    ------
    TypeError
        If ``x`` is not a ``float`` (a ``bool`` or ``int`` in a float field
        is a decoding error the caller should see, not something to mask).
    ValueError
        If ``x`` is NaN or infinite, which Go refuses to encode.
    """
    if not isinstance(x, float):
        raise TypeError(f"expected a float, got {type(x).__name__} {x!r}")
    r = repr(float(x))
    if r in ("nan", "inf", "-inf"):
        raise ValueError(f"JSON cannot hold {r}; Go's encoding/json refuses it")
    a = abs(x)
    if a != 0.0 and (a < 1e-6 or a >= 1e21):
        # repr writes an exponent below 1e-4 and from 1e16 on, so it has one
        # here, already with Go's sign and at least two digits.
        mantissa, exponent = r.split("e")
        if len(exponent) == 3 and exponent.startswith("-0"):
            exponent = "-" + exponent[2]
        return f"{mantissa}e{exponent}"
    if "e" in r:
        return _positional(r)
    return r[:-2] if r.endswith(".0") else r


def _positional(r: str) -> str:
    """Rewrite a ``repr`` in exponent form positionally, same digits."""
    mantissa, exponent = r.split("e")
    sign = ""
    if mantissa[0] == "-":
        sign, mantissa = "-", mantissa[1:]
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    point = len(whole) + int(exponent)
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _escape_char(match: re.Match[str]) -> str:
    """Go's escape for one character matched by ``_ESCAPED``."""
    c = match.group()
    short = _SHORT_ESCAPES.get(c)
    if short is not None:
        return short
    if "\ud800" <= c <= "\udfff":
        # Go replaces each invalid UTF-8 byte with U+FFFD; a lone surrogate
        # is how surrogateescape carries such a byte in a str.
        return "\\ufffd"
    return f"\\u{ord(c):04x}"


def go_json_string(s: str) -> str:
    """Spell ``s`` as Go's ``encoding/json`` does, quotes included.

    ``"`` and ``\\`` are escaped; ``\\n``, ``\\r``, ``\\t``, ``\\b`` and
    ``\\f`` use short escapes and other control characters ``\\u00xx``.
    Go's default HTML-safe mode also escapes ``<``, ``>``, ``&``, U+2028 and
    U+2029. Other text, DEL included, stays raw (it becomes UTF-8 when the
    document is encoded). Each lone surrogate becomes ``\\ufffd``, as Go does
    for each invalid UTF-8 byte (``surrogateescape`` maps one byte to one
    surrogate).
    """
    if _ESCAPED.search(s) is None:
        return f'"{s}"'
    return f'"{_ESCAPED.sub(_escape_char, s)}"'


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a day count since 1970-01-01, proleptic Gregorian.

    Howard Hinnant's ``civil_from_days``: exact for any integer, unlike
    ``datetime`` (years 1 to 9999) or ``time.gmtime`` (platform-dependent).
    """
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def rfc3339nano(seconds: int, nanos: int = 0) -> str:
    """Spell a UTC instant as Go's ``time.RFC3339Nano`` layout with ``Z``.

    ``YYYY-MM-DDTHH:MM:SS``, then, if ``nanos`` is not zero, a point and the
    nine-digit nanosecond count with trailing zeros removed, then ``Z``.
    Matches what Go's ``time.Time.MarshalJSON`` writes (without the quotes)
    for a UTC time.

    Parameters
    ----------
    seconds
        Seconds since 1970-01-01T00:00:00Z, possibly negative.
    nanos
        Nanoseconds within the second, 0 to 999,999,999.

    Raises
    ------
    ValueError
        If ``nanos`` is out of range or the year falls outside 0 to 9999,
        which Go's ``MarshalJSON`` refuses.
    """
    if not 0 <= nanos < _NANOS_PER_SECOND:
        raise ValueError(f"nanos must be in [0, 1e9), got {nanos}")
    days, sod = divmod(seconds, _SECONDS_PER_DAY)
    year, month, day = _civil_from_days(days)
    if not 0 <= year <= 9999:
        raise ValueError(
            f"year {year} is outside 0-9999; Go's time.MarshalJSON refuses it"
        )
    hour, rem = divmod(sod, 3600)
    minute, second = divmod(rem, 60)
    text = f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}"
    if nanos:
        text += "." + f"{nanos:09d}".rstrip("0")
    return text + "Z"


# -- RFC 3339 with nanoseconds, both ways (on codecs' timed paths) -----------

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
    seconds, nanos = divmod(ns, _NANOS_PER_SECOND)
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
            return seconds * _NANOS_PER_SECOND + fraction
    except (ValueError, IndexError, TypeError):
        pass
    return _parse_general(text)


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a proleptic Gregorian date (year 0 included, as in Go)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146_097 + year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year - 719_468


def _parse_general(text: object) -> int:
    """The exact path for offsets other than ``Z`` and for year 0; also names bad input.

    Calendar arithmetic is done here rather than by ``datetime``, which
    starts at year 1 while Go's RFC 3339 layout accepts years 0 to 9999.
    """
    match = _RFC3339.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"not an RFC 3339 time with nanoseconds: {text!r:.60}")
    clock_text, digits, zulu, sign, hours, minutes = match.groups()
    year, month, day = int(clock_text[:4]), int(clock_text[5:7]), int(clock_text[8:10])
    hour, minute, second = int(clock_text[11:13]), int(clock_text[14:16]), int(clock_text[17:19])
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    month_days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    if not (1 <= month <= 12 and 1 <= day <= month_days[month - 1] and hour < 24 and minute < 60 and second < 60):
        raise ValueError(f"not a valid date and time: {text!r:.60}")
    seconds = _days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
    if not zulu:
        if int(hours) > 23 or int(minutes) > 59:
            raise ValueError(f"not a valid UTC offset: {text!r:.60}")
        offset = int(hours) * 3600 + int(minutes) * 60
        seconds -= offset if sign == "+" else -offset
    fraction = int(digits) * _FRACTION_SCALE[len(digits)] if digits else 0
    return seconds * _NANOS_PER_SECOND + fraction
