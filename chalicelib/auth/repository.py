"""ApiKeys table: one item per key, keyed by the key's SHA-256 hash (:class:`ApiKeyRecord`)."""

from __future__ import annotations

from typing import Any

from chalicelib import storage
from chalicelib.auth.records import ApiKeyRecord, record
from chalicelib.config import settings


def get_key(key_hash: str) -> ApiKeyRecord | None:
    """The key stored under ``key_hash``, or ``None`` when no key has that hash."""
    item = storage.get(settings().API_KEYS_TABLE, {"keyHash": key_hash})
    return None if item is None else record(item)


def put_key_op(key: ApiKeyRecord) -> dict[str, Any]:
    """A transaction ``Put`` creating the item of ``key``; its condition fails when the hash exists already."""
    return storage.put_op(settings().API_KEYS_TABLE, key, condition="attribute_not_exists(keyHash)")
