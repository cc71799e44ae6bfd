"""ApiKeys table: one item per key, keyed by the key's SHA-256 hash (:class:`ApiKeyRecord`)."""

from __future__ import annotations

from chalicelib import storage
from chalicelib.auth.records import ApiKeyRecord, record
from chalicelib.config import settings
from chalicelib.transact_items import TransactItem


def get_key(key_hash: str) -> ApiKeyRecord | None:
    """The key stored under ``key_hash``, or ``None`` when no key has that hash."""
    item = storage.get(settings().API_KEYS_TABLE, {"keyHash": key_hash})
    return None if item is None else record(item)


def put_key_op(key: ApiKeyRecord) -> TransactItem:
    """A transaction ``Put`` creating the item of ``key``; its condition fails when the hash exists already."""
    return storage.tx_put(settings().API_KEYS_TABLE, key, condition="attribute_not_exists(keyHash)")


#: The ApiKeys index of a user's keys, oldest first (``userId``, ``createdAt``).
BY_USER_INDEX = "byUser"


def list_keys(user_id: str) -> list[ApiKeyRecord]:
    """Every key of ``user_id``, oldest first (one Query of :data:`BY_USER_INDEX`, expired ones included)."""
    items = storage.query(
        settings().API_KEYS_TABLE, IndexName=BY_USER_INDEX, KeyConditionExpression="userId = :u",
        ExpressionAttributeValues=storage.values(u=user_id),
    )
    return [record(i) for i in items]


def delete_key_op(key_hash: str, user_id: str) -> TransactItem:
    """A transaction ``Delete`` of the key ``key_hash``; its condition fails unless it exists and is ``user_id``'s."""
    return storage.tx_delete(settings().API_KEYS_TABLE, {"keyHash": key_hash}, condition="userId = :u",
                             ExpressionAttributeValues=storage.values(u=user_id))


def expire_key_op(key_hash: str, user_id: str, expires_at: int) -> TransactItem:
    """A transaction ``Update`` setting ``expiresAt`` (Unix seconds) of ``user_id``'s key ``key_hash``.

    The condition also refuses a key already due to expire sooner (a roll never extends a key's life).
    """
    return storage.tx_update(
        settings().API_KEYS_TABLE, {"keyHash": key_hash}, "SET expiresAt = :e",
        condition="userId = :u AND (attribute_not_exists(expiresAt) OR expiresAt > :e)",
        ExpressionAttributeValues=storage.values(u=user_id, e=expires_at),
    )


def suspend_key_op(key_hash: str, user_id: str, suspended: bool) -> TransactItem:
    """Transaction ``Update`` setting (or removing) the key's ``suspended`` flag; conditional on its owner."""
    expression = "SET suspended = :yes" if suspended else "REMOVE suspended"
    values = storage.values(u=user_id, yes=True) if suspended else storage.values(u=user_id)
    return storage.tx_update(settings().API_KEYS_TABLE, {"keyHash": key_hash}, expression, condition="userId = :u",
                             ExpressionAttributeValues=values)


def touch_key(key_hash: str, used_at: str) -> None:
    """Set ``lastUsedAt`` of an existing key (a key deleted meanwhile is left deleted)."""
    try:
        storage.update(settings().API_KEYS_TABLE, {"keyHash": key_hash}, "SET lastUsedAt = :t",
                       condition="attribute_exists(keyHash)", ExpressionAttributeValues=storage.values(t=used_at))
    except storage.ConditionFailed:
        return
