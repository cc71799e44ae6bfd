"""The ``RateLimits`` table: request buckets and users' daily quota counters (key ``pk``, TTL ``expiresAt``).

Items:

* ``user#<userId>`` (a user's request bucket, all its keys and sessions), ``signin-source#<address>``
  and ``signin-key#<key prefix>`` (the Dashboard's sign-in buckets): a bucket, ``tat`` (its theoretical arrival time, integer
  microseconds since the epoch; :mod:`chalicelib.rate_limits.gcra`). Changed by exactly one
  conditional UpdateItem per admitted request and never read: a failed condition returns the
  stored item (``ReturnValuesOnConditionCheckFailure``), so a refusal costs one write attempt and
  no read. ``expiresAt`` lets DynamoDB delete the item of an idle bucket (a missing bucket is a
  full one, so deleting it changes nothing).
* ``quota#<userId>#<kind>#<YYYY-MM-DD>``: how many writes of a kind (``match-requests``,
  ``profile-requests``, ``messages``) the user made that UTC day, ``used``. Incremented inside the
  transaction of the write it counts (:func:`count_op`), with the condition that it stays within
  the quota, so a refused or failed write counts nothing and no write goes uncounted.
"""

from __future__ import annotations

from typing import Any

from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.persistence.transact_items import TransactItem


class Stale(Exception):
    """A bucket write's condition failed; ``tat`` is the stored TAT (``None``: no bucket item)."""

    def __init__(self, tat: int | None) -> None:
        super().__init__(f"bucket TAT is {tat}")
        self.tat = tat


def bucket_key(bucket: str) -> dict[str, str]:
    """The table key of the bucket named ``bucket`` (``user#<userId>``, ``signin-source#<address>``, ...)."""
    return {"pk": bucket}


def _bucket_write(bucket: str, update: str, condition: str, **named: Any) -> int:
    try:
        item = storage.update(
            settings().RATE_LIMITS_TABLE, bucket_key(bucket), update, condition,
            ExpressionAttributeNames={"#tat": "tat", "#exp": "expiresAt"},
            ExpressionAttributeValues=storage.values(**named),
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    except storage.ConditionFailed as exc:
        stored = (exc.item or {}).get("tat")
        raise Stale(None if stored is None else int(stored)) from exc
    return int(item["tat"])


def advance(bucket: str, interval_us: int, now_us: int, ceiling_us: int, expires_at: int) -> int:
    """Admit one request to a bucket that is not full: ``tat += T`` if ``now < tat <= ceiling``.

    Parameters
    ----------
    bucket:
        The bucket's name (:func:`bucket_key`).
    interval_us, now_us, ceiling_us:
        The emission interval ``T``, the current time and the latest TAT that still admits (µs).
    expires_at:
        Epoch seconds after which DynamoDB may delete the item (TTL).

    Returns
    -------
    int
        The new TAT (µs).

    Raises
    ------
    Stale
        The condition failed: the bucket is full or missing (``tat <= now``), or empty
        (``tat > ceiling``); ``Stale.tat`` says which.
    """
    return _bucket_write(
        bucket, "SET #tat = #tat + :interval, #exp = :expires", "#tat > :now AND #tat <= :ceiling",
        interval=interval_us, now=now_us, ceiling=ceiling_us, expires=expires_at,
    )


def restart(bucket: str, interval_us: int, now_us: int, expires_at: int) -> int:
    """Admit one request to a full (or missing) bucket: ``tat = now + T`` if ``tat <= now``.

    Returns the new TAT (µs); parameters as :func:`advance`.

    Raises
    ------
    Stale
        The bucket is not full (``tat > now``); ``Stale.tat`` is its TAT.
    """
    return _bucket_write(
        bucket, "SET #tat = :next, #exp = :expires", "attribute_not_exists(#tat) OR #tat <= :now",
        next=now_us + interval_us, now=now_us, expires=expires_at,
    )


def quota_key(user_id: str, kind: str, day: str) -> dict[str, str]:
    """The table key of ``user_id``'s counter of ``kind`` on the UTC ``day`` (``YYYY-MM-DD``)."""
    return {"pk": f"quota#{user_id}#{kind}#{day}"}


def count_op(user_id: str, kind: str, day: str, limit: int, expires_at: int) -> TransactItem:
    """A transaction ``Update`` adding 1 to the counter, on condition that it was below ``limit``.

    Its condition fails (the transaction is cancelled, nothing written) when the user already
    made ``limit`` writes of ``kind`` on ``day``.
    """
    return storage.tx_update(
        settings().RATE_LIMITS_TABLE, quota_key(user_id, kind, day),
        "SET #exp = :expires ADD #used :one",
        "attribute_not_exists(#used) OR #used < :limit",
        ExpressionAttributeNames={"#used": "used", "#exp": "expiresAt"},
        ExpressionAttributeValues=storage.values(one=1, limit=limit, expires=expires_at),
    )
