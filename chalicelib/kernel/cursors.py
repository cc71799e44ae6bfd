"""Opaque page cursors (``cursor`` / ``nextCursor`` of every list envelope).

A cursor is ``base64url(JSON payload) "." base64url(HMAC-SHA256(payload)[:16])``. The payload
holds the page number it continues at, the page size, an optional position key (the sort key
of the last item of the previous page, for routes that page natively from an index) and a
digest of the query's *scope* (route, caller and every filter), so a cursor cannot be replayed
against another query. The HMAC (RFC 2104) keyed by the ``CURSOR_SECRET`` setting rejects
edited or forged cursors; it is an integrity check, not an access control: every cursor only
positions the caller's own query, which is still authorized and filtered as usual.

Every cursor is also bound to its *holder*, the caller it was issued to: the HTTP edge
runs each request within :func:`held_by` (the authenticated user id; ``""`` on public routes),
and the holder is part of the digest, so a cursor one user got is refused (400 naming
``cursor``) when another user sends it, on every list, searches included, whatever scope the
list itself names.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from chalicelib.kernel.config import settings

#: Cursor format version; bumped when the payload changes so old cursors fail cleanly.
VERSION = 1
_SIGNATURE_BYTES = 16
#: The base64url characters of a signature (unpadded).
_SIGNATURE_CHARS = len(base64.urlsafe_b64encode(bytes(_SIGNATURE_BYTES)).rstrip(b"="))


class InvalidCursor(ValueError):
    """The cursor is malformed, was edited, or belongs to another query; the message says which."""


@dataclass(frozen=True)
class CursorState:
    """What a cursor carries: the 1-based ``page`` it starts, ``page_size`` and the position ``key``."""

    page: int
    page_size: int
    key: str | None = None


_holder: ContextVar[str] = ContextVar("cursor_holder", default="")


@contextmanager
def held_by(holder: str) -> Iterator[None]:
    """Issue and accept cursors for ``holder`` (a user id; ``""``: no caller) within the block.

    Set by the HTTP edges (:func:`chalicelib.edge.http.route`, the Dashboard's ``page``) around each
    view; outside any block (event handlers, tests calling services) the holder is ``""``.
    """
    token = _holder.set(holder)
    try:
        yield
    finally:
        _holder.reset(token)


def _bound(scope: str) -> str:
    """``scope`` bound to the current holder (:func:`held_by`)."""
    return f"{scope}|holder={_holder.get()}"


def scope_digest(scope: str) -> str:
    """A short digest of a query scope string (the cursor stores it, never the scope itself)."""
    return hashlib.sha256(scope.encode()).hexdigest()[:16]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(payload: bytes) -> bytes:
    return hmac.new(settings().CURSOR_SECRET.encode(), payload, hashlib.sha256).digest()[:_SIGNATURE_BYTES]


def encode(scope: str, state: CursorState) -> str:
    """The opaque cursor for ``state`` within ``scope``."""
    return seal({"v": VERSION, "s": scope_digest(_bound(scope)), "p": state.page, "n": state.page_size, "k": state.key})


def seal(body: object) -> str:
    """The signed cursor text of any JSON-ready ``body`` (:func:`encode` builds the body; the fuzz
    test seals unexpected ones, which :func:`decode` and the lists must refuse with a 400)."""
    payload = json.dumps(body, separators=(",", ":"), sort_keys=True).encode()
    return f"{_b64(payload)}.{_b64(_sign(payload))}"


def sign_token(body: object) -> str:
    """A signed, path-safe token of any JSON-ready ``body`` (an id this service issues and must get
    back unchanged, e.g. an ``approvalId``): the signature's base64url characters, then the body's
    (no ``.``, which a path id may not hold)."""
    payload = json.dumps(body, separators=(",", ":"), sort_keys=True).encode()
    return _b64(_sign(payload)) + _b64(payload)


def open_token(token: str) -> Any:
    """The body of a token :func:`sign_token` wrote.

    Raises
    ------
    InvalidCursor
        Not a token this service signed, or edited.
    """
    signature, head = token[:_SIGNATURE_CHARS], token[_SIGNATURE_CHARS:]
    try:
        payload = _unb64(head)
    except (binascii.Error, ValueError) as exc:
        raise InvalidCursor("is not a token issued by this API") from exc
    if head != _b64(payload) or not hmac.compare_digest(signature.encode(), _b64(_sign(payload)).encode()):
        raise InvalidCursor("is not a token issued by this API (malformed or edited)")
    try:
        return json.loads(payload)
    except ValueError as exc:
        raise InvalidCursor("is not a token issued by this API") from exc


def decode(scope: str, cursor: str) -> CursorState:
    """Verify and decode ``cursor`` for ``scope``.

    Raises
    ------
    InvalidCursor
        Not a cursor this service issued, edited, of another format version, or issued for
        another query (other route, filters or page size) or to another holder (:func:`held_by`).
    """
    head, dot, tail = cursor.partition(".")
    try:
        payload = _unb64(head)
    except (binascii.Error, ValueError) as exc:
        raise InvalidCursor("is not a cursor issued by this API") from exc
    # The text as issued, not its decoded bytes: base64 decoding ignores the unused low bits of a
    # last character, so an edit there decoded to the same signature and was accepted (RFC 4648,
    # section 3.5: canonical encoding). Only the exact cursor this API wrote is valid.
    if not dot or head != _b64(payload) or not hmac.compare_digest(tail.encode(), _b64(_sign(payload)).encode()):
        raise InvalidCursor("is not a cursor issued by this API (malformed or edited)")
    try:
        body = json.loads(payload)
        page, page_size = body["p"], body["n"]
        if not (type(page) is int and type(page_size) is int):  # not a bool, a float or Infinity
            raise TypeError("page numbers are integers")
        state = CursorState(page=page, page_size=page_size, key=body.get("k"))
        version, digest = body["v"], body["s"]
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidCursor("is not a cursor issued by this API") from exc
    if version != VERSION:
        raise InvalidCursor("was issued by an older version of this API; start again without it")
    if digest != scope_digest(_bound(scope)):
        raise InvalidCursor(
            "belongs to another query or another caller; keep every other parameter as in the first request"
        )
    if state.page < 2 or (state.key is not None and not isinstance(state.key, str)):
        raise InvalidCursor("is not a cursor issued by this API")
    return state
