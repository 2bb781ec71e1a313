"""Keep passwords out of everything stratabench prints or writes.

A store URL may carry credentials (``postgresql://app:s3cret@db/app``).
Whatever shows a URL (messages, ``repr``, result headers, the ``services``
listing) shows :func:`redact` of it, and text that came from elsewhere, such
as a driver's exception message, goes through :func:`scrub` with the URL it
concerns before it is shown.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = ["MASK", "password_cut_short", "password_of", "redact", "scrub"]

MASK = "***"
"""What stands in for a password."""

# What looks like a credential in text that does not parse as a URL
# (``redis://:hunter2@[::1``): ``[scheme://]user:PASSWORD@``, the password
# running to the last ``@`` before a path, as in a URL's netloc.
_LOOSE_USERINFO = re.compile(r"(?P<user>(?:[A-Za-z][A-Za-z0-9+.-]*://)?[^\s/?#:@]*):(?P<password>[^\s/?#]*)@")
# After a ``scheme://``, a password may hold a raw ``/``, ``?`` or ``#``
# (generated passwords often do) that ends the netloc early for a URL parser
# (``redis://:Sec/ret@host/0``): there the password runs to the last ``@``
# before white space. Masking a path that holds ``@`` too is the safe error.
_LOOSE_URL_USERINFO = re.compile(r"(?P<user>[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#:@]*):(?P<password>\S*)@")
# The same for a string that is one URL (a --store argument): white space may be in the password too.
_WHOLE_URL_USERINFO = re.compile(r"(?P<user>[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#:@]*):(?P<password>.*)@", re.S)
_LOOSE_PASSWORD_PARAMETER = re.compile(r"(?i)(?P<key>\bpassword=)(?P<password>[^&\s#]*)")


def _mask_loosely(text: str) -> str:
    for pattern in (_LOOSE_URL_USERINFO, _LOOSE_USERINFO):
        text = pattern.sub(lambda m: f"{m['user']}:{MASK}@" if m["password"] and m["password"] != MASK else m[0],
                           text)
    return _LOOSE_PASSWORD_PARAMETER.sub(lambda m: f"{m['key']}{MASK}" if m["password"] else m[0], text)


def _loose_passwords(text: str) -> list[str]:
    found = [m["password"] for pattern in (_LOOSE_URL_USERINFO, _LOOSE_USERINFO) for m in pattern.finditer(text)]
    found += [m["password"] for m in _LOOSE_PASSWORD_PARAMETER.finditer(text)]
    return [password for password in found if password and password != MASK]


def _split_netloc(netloc: str) -> tuple[str | None, str | None, str]:
    # rpartition: a password may itself contain '@' when it was not escaped.
    userinfo, at, hostport = netloc.rpartition("@")
    if not at:
        return None, None, netloc
    user, colon, password = userinfo.partition(":")
    return user, (password if colon else None), hostport


def redact(url: str) -> str:
    """Return ``url`` with its password, if any, replaced by ``***``.

    The user name, host, port, path and query stay, so the URL still says
    which server it is. Query parameters named ``password`` (libpq style)
    are masked too. Text that does not parse as a URL is still searched for
    what looks like a credential (``user:PASSWORD@``, ``password=``), which
    is masked: a typo in a URL must not print its password.

    Examples
    --------
    >>> redact("mysql://bench:hunter2@127.0.0.1:3307/stratabench")
    'mysql://bench:***@127.0.0.1:3307/stratabench'
    """
    if password_cut_short(url):
        whole = _WHOLE_URL_USERINFO.match(url)
        assert whole is not None
        return _mask_loosely(f"{whole['user']}:{MASK}@{url[whole.end():]}")
    try:
        parts = urlsplit(url)
    except ValueError:
        return _mask_loosely(url)
    user, password, hostport = _split_netloc(parts.netloc)
    netloc = parts.netloc
    if password is not None:
        netloc = f"{user}:{MASK}@{hostport}"
    query = parts.query
    if "password=" in query.lower():
        pairs = []
        for pair in query.split("&"):
            key, eq, _ = pair.partition("=")
            pairs.append(f"{key}={MASK}" if eq and key.lower() == "password" else pair)
        query = "&".join(pairs)
    if netloc == parts.netloc and query == parts.query:
        return _mask_loosely(url)
    return _mask_loosely(urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment)))


def password_cut_short(url: str) -> bool:
    """Whether a URL parser ends ``url``'s host part inside its password (a raw ``/``, ``?`` or ``#`` in it).

    ``redis://:Sec/ret@127.0.0.1/0`` parses as host ``:Sec`` and path
    ``/ret@127.0.0.1/0``: pieces of the password would be read as a port or a
    database, and shown in messages.
    """
    try:
        netloc = urlsplit(url).netloc
    except ValueError:
        netloc = ""
    return "@" not in netloc and _WHOLE_URL_USERINFO.match(url) is not None


def password_of(url: str) -> str | None:
    """The password carried by ``url`` (decoded), or ``None``; also of text that is not a URL."""
    whole = _WHOLE_URL_USERINFO.match(url)
    if whole is not None and password_cut_short(url):
        return unquote(whole["password"])
    try:
        parts = urlsplit(url)
    except ValueError:
        loose = _loose_passwords(url)
        return unquote(loose[0]) if loose else None
    _, password, _ = _split_netloc(parts.netloc)
    if password and "@" in parts.netloc:
        return unquote(password)
    for pair in parts.query.split("&"):
        key, eq, value = pair.partition("=")
        if eq and key.lower() == "password" and value:
            return unquote(value)
    loose = _loose_passwords(url)
    return unquote(loose[0]) if loose else None


def scrub(text: str, *urls: str) -> str:
    """Remove from ``text`` every URL of ``urls`` and every password they carry.

    Use it on text stratabench did not write itself (a driver's error
    message, a server log line) before showing it: the URL is replaced by
    its redacted form and the password, raw or percent-encoded, by ``***``.
    """
    for url in urls:
        if not url:
            continue
        text = text.replace(url, redact(url))
        secrets = set(_loose_passwords(url))
        whole = _WHOLE_URL_USERINFO.match(url)
        if whole is not None and password_cut_short(url):
            secrets.add(whole["password"])
        password = password_of(url)
        if password:
            secrets.add(password)
        secrets.update(unquote(secret) for secret in list(secrets))
        for secret in sorted(secrets, key=len, reverse=True):
            if secret:
                text = text.replace(secret, MASK)
    return _mask_loosely(text)
