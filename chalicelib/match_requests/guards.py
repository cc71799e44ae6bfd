"""Conditions on listing and user items that request transactions carry (no read-before-write).

What a service checked on a read is re-checked atomically by the transaction that acts on it:

* creating a match request requires the listing to be ACTIVE at commit time and counts the
  request on the listing (``requestCount``, written only here);
* deciding on a match request requires the listing to still exist (a deletion rejects the
  pending requests itself);
* deleting a listing requires ``requestCount`` to equal the requests the deletion found, so a
  request committed after that Query (or missing from the eventually consistent
  ``subjectNewest`` index) cancels the deletion instead of being left PENDING;
* creating a profile request requires the target's policy to still admit the requester and
  the chosen channel to still be connected.
"""

from __future__ import annotations

from typing import Any

from chalicelib import storage
from chalicelib.config import settings
from chalicelib.listings.status import ListingStatus


def _listing_key(listing_id: str) -> dict[str, str]:
    return {"listingId": listing_id}


def count_request_on_active_listing_op(listing_id: str) -> dict[str, Any]:
    """Transaction ``Update``: ``requestCount + 1``, only while the listing accepts requests.

    The condition is :func:`chalicelib.listings.status.accepts_requests` written as a condition
    expression (status ACTIVE), so the service's check on its read is re-checked at commit.
    """
    return storage.update_op(
        settings().LISTINGS_TABLE,
        _listing_key(listing_id),
        "SET requestCount = if_not_exists(requestCount, :zero) + :one",
        condition="#st = :active",
        ExpressionAttributeNames={"#st": "status"},
        ExpressionAttributeValues=storage.values(zero=0, one=1, active=ListingStatus.ACTIVE.value),
    )


def listing_exists_op(listing_id: str) -> dict[str, Any]:
    """Transaction ``ConditionCheck``: the listing has not been deleted."""
    return storage.condition_op(settings().LISTINGS_TABLE, _listing_key(listing_id), "attribute_exists(listingId)")


def delete_listing_op(
    listing_id: str, owner_id: str, request_count: int, status: str, version: int | None = None
) -> dict[str, Any]:
    """Transaction ``Delete`` of a listing owned by ``owner_id`` that has exactly ``request_count`` requests,
    is still in ``status`` and, when ``version`` is given, still at that version (``If-Match``).

    Replaces the plain owner-conditioned delete when pending requests are rejected with it.
    The listing must still be in ``status`` (the deleting transaction adjusts the search
    counters by it).
    """
    counted = "requestCount = :n" if request_count else "(attribute_not_exists(requestCount) OR requestCount = :n)"
    vals: dict[str, Any] = {"o": owner_id, "n": request_count, "st": status}
    condition = f"ownerId = :o AND #st = :st AND {counted}"
    if version is not None:
        condition += " AND version = :v"
        vals["v"] = version
    return storage.delete_op(
        settings().LISTINGS_TABLE,
        _listing_key(listing_id),
        condition=condition,
        ExpressionAttributeNames={"#st": "status"},
        ExpressionAttributeValues=storage.values(**vals),
    )


def profile_admits_op(user_id: str, requester_level: int, channel: str) -> dict[str, Any]:
    """Transaction ``ConditionCheck`` on the requested user.

    Holds when the user exists, accepts requests, requires at most ``requester_level`` and
    still has ``channel`` connected (missing policy attributes mean the defaults: accepting,
    level 0).
    """
    return storage.condition_op(
        settings().USERS_TABLE,
        {"userId": user_id},
        "attribute_exists(userId)"
        " AND (attribute_not_exists(#rp.acceptingRequests) OR #rp.acceptingRequests = :yes)"
        " AND (attribute_not_exists(#rp.minVerifiedLevel) OR #rp.minVerifiedLevel <= :level)"
        " AND attribute_exists(#chs.#ch)",
        ExpressionAttributeNames={"#rp": "requestPolicy", "#chs": "channels", "#ch": channel},
        ExpressionAttributeValues=storage.values(yes=True, level=requester_level),
    )
