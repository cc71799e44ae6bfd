"""Dashboard sessions and their CSRF tokens.

* Sign-in exchanges an API key (checked exactly as the API checks a Bearer key) for a session:
  a random id of 32 bytes (:mod:`secrets`, 256 bits) that travels only in the browser's cookie;
  the table stores its SHA-256 (OWASP Session Management Cheat Sheet: ids of at least 64 bits
  of entropy; a hash suffices for high-entropy tokens, as for API keys).
* A session lasts :data:`SESSION_HOURS` hours from sign-in (absolute timeout). The DynamoDB TTL
  removes the item eventually; a read also refuses an item past ``expiresAt``, because TTL
  deletion can lag by days (DynamoDB developer guide, "Time to Live").
* A session ends with the API key it was opened with: every request checks that key through the
  authentication cache (:func:`chalicelib.auth.service.key_alive`), so revoking a leaked key
  also signs out the browsers signed in with it.
* The CSRF token of a session is ``HMAC-SHA256(session id, "dashboard-csrf")`` (OWASP CSRF
  Prevention Cheat Sheet, "Synchronizer token" / HMAC-based pattern): unguessable without the
  cookie, nothing more to store, compared in constant time.
* A *flash* carries a one-time message to the page a POST redirects to (Post/Redirect/Get): a
  secret shown once (a rotated webhook secret, a new user's API key) is never re-sent by a
  reload. It is stored on the session item sealed with Fernet (cryptography's AES-128-CBC +
  HMAC-SHA256 recipe) under ``HMAC-SHA256(session id, "dashboard-flash")``, so the table alone
  (which holds only the id's hash) cannot open it; shown once (removed on a conditional update)
  and refused after :data:`FLASH_SECONDS`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from chalicelib.auth.keys import hash_key
from chalicelib.auth.service import Caller, authenticate, key_alive
from chalicelib.dashboard import session_store
from chalicelib.kernel import clock, errors

#: Absolute lifetime of a Dashboard session (TTL 12 h).
SESSION_HOURS = 12
SESSION_SECONDS = SESSION_HOURS * 3600
_CSRF_CONTEXT = b"dashboard-csrf"
_FLASH_CONTEXT = b"dashboard-flash"
#: A flash not shown within this many seconds of its POST is dropped (the redirect follows at once).
FLASH_SECONDS = 600


@dataclass(frozen=True)
class Session:
    """A live Dashboard session."""

    #: The raw id from the cookie (never stored server-side).
    session_id: str
    #: Who signed in (user id and the key's scopes).
    caller: Caller
    #: Unix seconds when the session ends.
    expires_at: int
    #: The sealed one-time flash stored on the session, if any (:func:`take_flash` opens it).
    flash: str | None = None
    #: SHA-256 of the API key the session was opened with ("" for sessions older than that field).
    key_hash: str = ""

    @property
    def csrf_token(self) -> str:
        """The CSRF token every state-changing form of this session must carry."""
        return csrf_token(self.session_id)


def session_hash(session_id: str) -> str:
    """The stored form of a session id: lower-case hex SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()


def csrf_token(session_id: str) -> str:
    """``HMAC-SHA256(key=session id, "dashboard-csrf")`` as 64 hex characters."""
    return hmac.new(session_id.encode("utf-8"), _CSRF_CONTEXT, hashlib.sha256).hexdigest()


def csrf_valid(session: Session, token: str | None) -> bool:
    """True when ``token`` is the session's CSRF token (constant-time comparison)."""
    return bool(token) and hmac.compare_digest(session.csrf_token, str(token))


def sign_in(api_key: str) -> Session:
    """Start a session for the owner of ``api_key``.

    Parameters
    ----------
    api_key:
        An API key as issued (``msk_...``), surrounding whitespace ignored.

    Returns
    -------
    Session
        The new session; its ``session_id`` goes into the cookie.

    Raises
    ------
    Unauthorized
        Empty or unknown key (the same check as ``Authorization: Bearer``).
    """
    key = api_key.strip()
    if not key:
        raise errors.Unauthorized("Enter an API key")
    caller = authenticate(f"Bearer {key}")
    session_id = secrets.token_urlsafe(32)
    moment = clock.now()
    expires_at = clock.epoch_seconds(moment + timedelta(hours=SESSION_HOURS))
    session_store.create(
        {
            "sessionHash": session_hash(session_id),
            "userId": caller.user_id,
            "scopes": sorted(caller.scopes),
            "createdAt": clock.iso(moment),
            "expiresAt": expires_at,
            "keyHash": hash_key(key),
        }
    )
    return Session(session_id, caller, expires_at, key_hash=hash_key(key))


def resolve(session_id: str | None) -> Session | None:
    """The live session of a cookie value, or ``None`` (missing, unknown, expired or malformed)."""
    if not session_id or len(session_id) > 128:
        return None
    stored = session_store.get(session_hash(session_id))
    if stored is None or stored["expiresAt"] <= clock.epoch_seconds():
        return None
    if "keyHash" in stored and not key_alive(stored["keyHash"], stored["createdAt"]):
        return None  # the key signed in with was revoked, rolled past its expiry, or suspended since
    caller = Caller(user_id=stored["userId"], scopes=frozenset(stored["scopes"]))
    return Session(session_id, caller, stored["expiresAt"], flash=stored.get("flash"), key_hash=stored.get("keyHash", ""))



def follow_roll(session: Session, old_hash: str, new_hash: str) -> None:
    """After the key ``old_hash`` was rolled to ``new_hash``: a session opened with the old key goes
    on with the new one (it would otherwise end when the old key does, before its owner could
    see the new secret). Other sessions are left alone."""
    if session.key_hash == old_hash:
        session_store.set_key_hash(session_hash(session.session_id), old_hash, new_hash)


def sign_out(session: Session) -> None:
    """End ``session`` (its item is deleted; the cookie no longer resolves)."""
    session_store.delete(session_hash(session.session_id))


def _sealer(session_id: str) -> Any:
    from cryptography.fernet import Fernet  # loaded with the first flash, not at cold start

    key = hmac.new(session_id.encode("utf-8"), _FLASH_CONTEXT, hashlib.sha256).digest()
    return Fernet(base64.urlsafe_b64encode(key))


def put_flash(session: Session, kind: str, data: dict[str, Any]) -> None:
    """Leave ``data`` (JSON-ready) for the next page of ``session`` that asks for a flash of ``kind``.

    Parameters
    ----------
    kind:
        What the flash is (``webhook-rotated``, ``user-created``): a page takes only its own kind.
    data:
        What to show; may hold a secret (it is sealed with the session's key).
    """
    payload = json.dumps({"kind": kind, "data": data}).encode("utf-8")
    sealed = _sealer(session.session_id).encrypt_at_time(payload, clock.epoch_seconds())
    session_store.set_flash(session_hash(session.session_id), sealed.decode("ascii"))


def take_flash(session: Session, kind: str) -> dict[str, Any] | None:
    """The flash of ``kind`` left for this session, removed as it is read; ``None`` when there is none,
    it is of another kind, older than :data:`FLASH_SECONDS`, or another request took it first."""
    from cryptography.fernet import InvalidToken

    if not session.flash:
        return None
    try:
        opened = _sealer(session.session_id).decrypt_at_time(session.flash.encode("ascii"), FLASH_SECONDS, clock.epoch_seconds())
        payload = json.loads(opened)
    except (InvalidToken, ValueError):
        session_store.clear_flash(session_hash(session.session_id), session.flash)  # expired or unreadable: drop it
        return None
    if payload.get("kind") != kind:
        return None
    if not session_store.clear_flash(session_hash(session.session_id), session.flash):
        return None
    return dict(payload["data"])
