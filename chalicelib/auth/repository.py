"""ApiKeys table: one item per key, keyed by the key's SHA-256 hash."""

from __future__ import annotations

from typing import Any

from chalicelib import storage
from chalicelib.config import settings


def get_key(key_hash: str) -> dict[str, Any] | None:
    """Return ``{keyHash, userId, scopes, createdAt}`` for ``key_hash``, or ``None``."""
    return storage.get(settings().API_KEYS_TABLE, {"keyHash": key_hash})


def put_key_op(key_hash: str, user_id: str, scopes: list[str], created_at: str) -> dict[str, Any]:
    """A transaction ``Put`` creating a key item; fails if the hash already exists."""
    return storage.put_op(
        settings().API_KEYS_TABLE,
        {"keyHash": key_hash, "userId": user_id, "scopes": scopes, "createdAt": created_at},
        condition="attribute_not_exists(keyHash)",
    )
