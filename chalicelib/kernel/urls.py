"""Absolute http(s) URLs supplied by users: the one syntax check.

Listing meta fields of type ``url`` and profile links take :func:`absolute_http_url`; webhook
URLs take :func:`split_http_url` and add their delivery rules on top
(:mod:`chalicelib.webhooks.addresses`: https only outside local stages, no user info, address
checks at every delivery).
"""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit

#: Longest accepted URL, in characters (the common practical limit of browsers and proxies).
MAX_LENGTH = 2048
#: Schemes of an http(s) URL.
HTTP_SCHEMES = ("https", "http")


class InvalidUrl(ValueError):
    """Not an acceptable absolute URL; the message says why, phrased to follow a field name."""


def split_http_url(value: str, schemes: tuple[str, ...] = HTTP_SCHEMES) -> SplitResult:
    """Check the syntax of an absolute URL with one of ``schemes`` and split it.

    Parameters
    ----------
    value:
        The URL exactly as given (not stripped).
    schemes:
        Accepted schemes, lower case.

    Returns
    -------
    urllib.parse.SplitResult
        The parts; ``hostname`` is set.

    Raises
    ------
    InvalidUrl
        Longer than :data:`MAX_LENGTH`, containing spaces or control characters, unparsable (an
        unclosed IPv6 literal), another scheme, or no host.
    """
    if len(value) > MAX_LENGTH:
        raise InvalidUrl(f"must be at most {MAX_LENGTH} characters")
    if any(ord(c) <= 32 or ord(c) == 127 for c in value):
        raise InvalidUrl("must not contain spaces or control characters")
    try:
        parts = urlsplit(value)
    except ValueError as exc:  # an unclosed IPv6 literal ("https://[x"), ...
        raise InvalidUrl(f"is not a valid URL: {exc}") from exc
    if parts.scheme.lower() not in schemes:
        raise InvalidUrl("must be an https URL" if schemes == ("https",) else "must be an absolute http(s) URL")
    if not (parts.hostname or "").rstrip("."):
        raise InvalidUrl("must name a host")
    return parts


def absolute_http_url(value: str) -> str:
    """``value`` stripped, if it is an absolute http(s) URL whose host has a dot (a public name).

    Raises
    ------
    InvalidUrl
        As :func:`split_http_url` (too long, spaces or non-ASCII, another scheme, no host), user
        info, an IPv6 literal, a backslash or a port that is not one in the authority, or ``"must
        be an absolute http(s) URL"`` for a host without a dot.
    """
    text = value.strip()
    parts = split_http_url(text)
    if not text.isascii():  # a URI is ASCII (RFC 3986): no bidi control or look-alike letter hides in one
        raise InvalidUrl("must be printable ASCII: a host in its xn-- form, other characters percent-encoded")
    if any(c in parts.netloc for c in "@[\\"):  # a link shown to others names its host plainly
        raise InvalidUrl("must name its host plainly: no user info (user@), IPv6 literal or backslash")
    try:
        parts.port  # noqa: B018 - reading it checks it: digits, at most 65535
    except ValueError as exc:
        raise InvalidUrl(f"is not a valid URL: {exc}") from exc
    if "." not in (parts.hostname or ""):
        raise InvalidUrl("must be an absolute http(s) URL")
    return text
