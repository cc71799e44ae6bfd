"""API key format and hashing.

Keys are ``msk_`` + 43 URL-safe base64 characters (32 random bytes from :mod:`secrets`).
Only their SHA-256 hex digest is stored (DESIGN §2); a high-entropy key needs no slow
password hash (OWASP "API key" guidance). A key's public id (:func:`new_key_id`) is drawn
independently of the key, as Stripe's and GitHub's key ids are: no part of the key or its hash
is ever shown or exported, so nothing shown lets anyone check a guessed key offline.
"""

from __future__ import annotations

import hashlib
import secrets

from chalicelib.auth.records import ApiKeyRecord

KEY_PREFIX = "msk_"


def new_api_key() -> str:
    """Return a new random API key (shown to its owner once, never stored)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_key(api_key: str) -> str:
    """Return the lower-case hex SHA-256 digest of ``api_key`` (UTF-8), the stored form."""
    return hashlib.sha256(api_key.encode("utf-8")).hexdigest()


#: Characters of a key after :data:`KEY_PREFIX` that its shown prefix keeps.
SHOWN_CHARACTERS = 4


def key_prefix(api_key: str) -> str:
    """The first characters of ``api_key`` (``msk_`` and four more): what a key list shows, and what
    the sign-in limiter counts guesses by. Not usable to authenticate."""
    return api_key[: len(KEY_PREFIX) + SHOWN_CHARACTERS]


#: Hex characters of a key's public id (:func:`new_key_id`).
KEY_ID_LENGTH = 16


def new_key_id() -> str:
    """Return a new public id for a key: :data:`KEY_ID_LENGTH` random lower-case hex characters.

    The id names the key to its owner (Dashboard URLs, the account export, audit entries); it is
    drawn from :mod:`secrets` when the key's record is made, independent of the key, so knowing
    it tells nothing about the key or its hash.
    """
    return secrets.token_hex(KEY_ID_LENGTH // 2)


def key_record(user_id: str, secret: str, scopes: list[str], created_at: str, name: str = "") -> ApiKeyRecord:
    """The stored record of the new key ``secret`` of ``user_id``: its hash, a new public id, its
    ``scopes``, ``created_at`` (ISO 8601 UTC), the owner's ``name`` (none for a user's first key)
    and its shown prefix (:func:`key_prefix`), so every key list tells it apart from the others."""
    record: ApiKeyRecord = {"keyHash": hash_key(secret), "keyId": new_key_id(), "userId": user_id, "scopes": scopes,
                            "createdAt": created_at, "prefix": key_prefix(secret)}
    if name:
        record["name"] = name
    return record
