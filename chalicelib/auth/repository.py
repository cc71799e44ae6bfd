"""ApiKeys table: one item per key, keyed by the key's SHA-256 hash (:class:`ApiKeyRecord`), and one
counter item per user, ``keys#<userId>`` with ``keyCount`` (how many keys the user holds; never an
SHA-256 hex digest, so no key can look it up; without ``userId`` it stays out of the ``byUser`` index)."""

from __future__ import annotations

from chalicelib.auth.records import ApiKeyRecord, record
from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.persistence.transact_items import TransactItem


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


def assign_key_id(key_hash: str, user_id: str, key_id: str) -> ApiKeyRecord | None:
    """Give ``user_id``'s key ``key_hash``, made before keys had a ``keyId``, the public id ``key_id``, once.

    One conditional UpdateItem (``attribute_not_exists(keyId)``): of concurrent assignments the
    first wins and the others read the id it wrote (``ReturnValuesOnConditionCheckFailure``).

    Parameters
    ----------
    key_hash:
        The key's SHA-256 (the item's key).
    user_id:
        The key's owner (the condition also checks it).
    key_id:
        A new id (:func:`chalicelib.auth.keys.new_key_id`).

    Returns
    -------
    ApiKeyRecord | None
        The key as stored afterwards, with ``key_id`` or the id another request gave it first;
        ``None`` when the key is gone (revoked meanwhile) or is not ``user_id``'s.
    """
    try:
        item: dict[str, object] | None = storage.update(
            settings().API_KEYS_TABLE, {"keyHash": key_hash}, "SET keyId = :k",
            condition="userId = :u AND attribute_not_exists(keyId)",
            ExpressionAttributeValues=storage.values(u=user_id, k=key_id), ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    except storage.ConditionFailed as exc:
        item = exc.item
    if item is None or item.get("userId") != user_id or "keyId" not in item:
        return None
    return record(item)


def delete_key_op(key_hash: str, user_id: str) -> TransactItem:
    """A transaction ``Delete`` of the key ``key_hash``; its condition fails unless it exists and is ``user_id``'s."""
    return storage.tx_delete(settings().API_KEYS_TABLE, {"keyHash": key_hash}, condition="userId = :u",
                             ExpressionAttributeValues=storage.values(u=user_id))


def end_key_op(key_hash: str, user_id: str) -> TransactItem:
    """A transaction ``Delete`` of ``user_id``'s key ``key_hash`` that may be gone already (a rolled-out
    key ended with its successor: its TTL may have removed it first)."""
    return storage.tx_delete(settings().API_KEYS_TABLE, {"keyHash": key_hash},
                             condition="attribute_not_exists(keyHash) OR userId = :u",
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


def key_count_key(user_id: str) -> dict[str, str]:
    """The table key of the counter of ``user_id``'s keys."""
    return {"keyHash": f"keys#{user_id}"}


def count_key_op(user_id: str, limit: int) -> TransactItem:
    """A transaction ``Update`` adding one to ``user_id``'s key count; its condition fails when the
    user holds ``limit`` keys already (a missing counter is 0)."""
    return storage.tx_update(
        settings().API_KEYS_TABLE, key_count_key(user_id), "SET keyCount = if_not_exists(keyCount, :zero) + :one",
        condition="attribute_not_exists(keyCount) OR keyCount < :limit",
        ExpressionAttributeValues=storage.values(zero=0, one=1, limit=limit),
    )


def uncount_key_op(user_id: str) -> TransactItem:
    """A transaction ``Update`` taking one from ``user_id``'s key count (no condition: the key's own
    delete carries the transaction's condition)."""
    return storage.tx_update(
        settings().API_KEYS_TABLE, key_count_key(user_id), "SET keyCount = if_not_exists(keyCount, :one) - :one",
        ExpressionAttributeValues=storage.values(one=1),
    )


def suspend_key_op(key_hash: str, user_id: str, suspended: bool, at: str) -> TransactItem:
    """Transaction ``Update`` setting (or removing) the key's ``suspended`` flag; conditional on its owner.

    A suspension also sets ``sessionsFrom`` to ``at`` (ISO 8601 UTC), which a reinstatement keeps:
    the Dashboard sessions opened with the key before the suspension stay ended.
    """
    expression = "SET suspended = :yes, sessionsFrom = :at" if suspended else "REMOVE suspended"
    values = storage.values(u=user_id, yes=True, at=at) if suspended else storage.values(u=user_id)
    return storage.tx_update(settings().API_KEYS_TABLE, {"keyHash": key_hash}, expression, condition="userId = :u",
                             ExpressionAttributeValues=values)


def touch_key(key_hash: str, used_at: str) -> None:
    """Set ``lastUsedAt`` of an existing key (a key deleted meanwhile is left deleted)."""
    try:
        storage.update(settings().API_KEYS_TABLE, {"keyHash": key_hash}, "SET lastUsedAt = :t",
                       condition="attribute_exists(keyHash)", ExpressionAttributeValues=storage.values(t=used_at))
    except storage.ConditionFailed:
        return


def forget_key_count_op(user_id: str) -> TransactItem:
    """A transaction ``Delete`` of ``user_id``'s key counter item (the account erasure)."""
    return storage.tx_delete(settings().API_KEYS_TABLE, key_count_key(user_id))
