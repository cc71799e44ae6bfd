"""Listings table access.

Item shape: ``{listingId, ownerId, categoryKey, roleKey, title, meta, channels, webhookIds,
status, statusReason?, version, searchText, createdAt, updatedAt}`` plus, while ACTIVE, the
sparse index attributes of :mod:`chalicelib.listings.search.index` and, while PENDING, those of the
``pendingReview`` index (:func:`pending_attributes`). ``version`` increments on every
content change; approval tasks carry it so a stale task is never applied.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chalicelib import storage
from chalicelib.config import settings
from chalicelib.listings.search.index import INDEX_ATTRIBUTES, index_attributes


def _table() -> str:
    return settings().LISTINGS_TABLE


def _key(listing_id: str) -> dict[str, str]:
    return {"listingId": listing_id}


#: Partition value of the sparse ``pendingReview`` index: every PENDING listing, one partition
#: (an administrators' review queue is small; oldest first by ``pendingSort``).
PENDING_PARTITION = "PENDING"
PENDING_INDEX = "pendingReview"


def pending_attributes(listing_id: str, submitted_at: str) -> dict[str, str]:
    """The ``pendingReview`` index attributes of a listing submitted (created or changed) at ``submitted_at``.

    ``pendingSort`` is ``<submittedAt ISO 8601 UTC>#<listingId>``: oldest submission first,
    unique per listing.
    """
    return {"pendingQueue": PENDING_PARTITION, "pendingSort": f"{submitted_at}#{listing_id}"}


def get(listing_id: str) -> dict[str, Any] | None:
    """The listing item, or ``None``."""
    return storage.get(_table(), _key(listing_id))


def get_many(listing_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Listings by id (BatchGetItem); missing ids are absent."""
    return {i["listingId"]: i for i in storage.batch_get(_table(), [_key(x) for x in listing_ids])}


def list_by_owner(owner_id: str) -> list[dict[str, Any]]:
    """Every listing of ``owner_id``, newest first (``byOwner`` index)."""
    return storage.query_index(_table(), "byOwner", "ownerId", owner_id, newest_first=True)


def create(item: dict[str, Any], extra_ops: Sequence[dict[str, Any]]) -> None:
    """Put a new listing together with ``extra_ops`` (its outbox event) in one transaction."""
    storage.transact([storage.put_op(_table(), item, condition="attribute_not_exists(listingId)"), *extra_ops])


_REMOVE_PENDING = "pendingQueue, pendingSort"


def _remove_index() -> str:
    return ", ".join(INDEX_ATTRIBUTES)


def replace_content_op(item: dict[str, Any], expected_version: int) -> dict[str, Any]:
    """Transaction ``Update``: new content, status PENDING, version + 1, out of the search indexes.

    Conditional on the stored ``version`` still being ``expected_version`` (optimistic lock).
    """
    return storage.update_op(
        _table(),
        _key(item["listingId"]),
        "SET title = :t, meta = :m, channels = :c, webhookIds = :w, searchText = :s, #st = :pending, "
        "version = :next, updatedAt = :u, pendingQueue = :pq, pendingSort = :ps "
        f"REMOVE statusReason, {_remove_index()}",
        condition="version = :v",
        ExpressionAttributeNames={"#st": "status"},
        ExpressionAttributeValues=storage.values(
            t=item["title"], m=item["meta"], c=item["channels"], w=item["webhookIds"], s=item["searchText"],
            pending="PENDING", next=expected_version + 1, u=item["updatedAt"], v=expected_version,
            pq=PENDING_PARTITION, ps=pending_attributes(item["listingId"], item["updatedAt"])["pendingSort"],
        ),
    )


def activate(listing: dict[str, Any], from_status: str, updated_at: str, version: int | None = None) -> dict[str, Any]:
    """Move ``listing`` from ``from_status`` to ACTIVE and into the search indexes.

    ``version`` (approvals) additionally requires the stored version to match.

    Raises
    ------
    storage.ConditionFailed
        The listing is gone, not in ``from_status``, or at another version.
    """
    attributes = index_attributes(listing)
    sets = ", ".join(f"{k} = :{k}" for k in attributes)
    condition = "#st = :from" + (" AND version = :v" if version is not None else "")
    vals: dict[str, Any] = {"from": from_status, "active": "ACTIVE", "u": updated_at, **attributes}
    if version is not None:
        vals["v"] = version
    return storage.update(
        _table(), _key(listing["listingId"]),
        f"SET #st = :active, updatedAt = :u, {sets} REMOVE statusReason, {_REMOVE_PENDING}",
        condition=condition,
        ExpressionAttributeNames={"#st": "status"},
        ExpressionAttributeValues=storage.values(**vals),
    )


def deactivate(listing_id: str, from_status: str, to_status: str, updated_at: str,
               reason: str | None = None, version: int | None = None) -> dict[str, Any]:
    """Move a listing from ``from_status`` to ``to_status`` (PAUSED, REJECTED) and out of the indexes.

    Raises
    ------
    storage.ConditionFailed
        The listing is gone, not in ``from_status``, or at another ``version``.
    """
    condition = "#st = :from" + (" AND version = :v" if version is not None else "")
    vals: dict[str, Any] = {"from": from_status, "to": to_status, "u": updated_at}
    if version is not None:
        vals["v"] = version
    expression = "SET #st = :to, updatedAt = :u"
    if reason is not None:
        expression += ", statusReason = :r"
        vals["r"] = reason
    expression += f" REMOVE {_remove_index()}, {_REMOVE_PENDING}" + ("" if reason is not None else ", statusReason")
    return storage.update(
        _table(), _key(listing_id), expression, condition=condition,
        ExpressionAttributeNames={"#st": "status"}, ExpressionAttributeValues=storage.values(**vals),
    )


def delete_op(listing_id: str, owner_id: str) -> dict[str, Any]:
    """Transaction ``Delete`` of a listing, conditional on its owner."""
    return storage.delete_op(
        _table(), _key(listing_id), condition="ownerId = :o", ExpressionAttributeValues=storage.values(o=owner_id)
    )


def query_category(category_key: str, role_key: str | None = None) -> list[dict[str, Any]]:
    """ACTIVE listings of a category (optionally one role), from the ``activeByCategory`` index."""
    condition = "activeCategory = :c"
    vals: dict[str, Any] = {"c": category_key}
    if role_key:
        condition += " AND begins_with(activeSort, :r)"
        vals["r"] = f"{role_key}#"
    return storage.query(
        _table(), IndexName="activeByCategory", KeyConditionExpression=condition,
        ExpressionAttributeValues=storage.values(**vals),
    )


def query_cell(precision: int, cell_key: str, sort_prefix: str | None = None) -> list[dict[str, Any]]:
    """ACTIVE listings in one geohash cell (``cell_key`` = ``<fieldKey>#<geohash>``), optionally
    narrowed to a ``category#`` or ``category#role#`` prefix of ``geoSort``."""
    attribute = f"geo{precision}"
    condition = f"{attribute} = :g"
    vals: dict[str, Any] = {"g": cell_key}
    if sort_prefix:
        condition += " AND begins_with(geoSort, :p)"
        vals["p"] = sort_prefix
    return storage.query(
        _table(), IndexName=f"activeByGeo{precision}", KeyConditionExpression=condition,
        ExpressionAttributeValues=storage.values(**vals),
    )


def query_pending(limit: int, start_after: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Up to ``limit`` PENDING listings, oldest submission first, from the sparse ``pendingReview`` index.

    Parameters
    ----------
    limit:
        Largest number of listings to return (1..101).
    start_after:
        Index key (``listingId``, ``pendingQueue``, ``pendingSort``) of the last listing already
        seen, from :func:`pending_position`, or ``None`` to start at the oldest.

    Returns
    -------
    list
        The listing items (index projection ALL). One Query request; its read cost grows with
        ``limit`` only.
    """
    params: dict[str, Any] = {
        "IndexName": PENDING_INDEX,
        "KeyConditionExpression": "pendingQueue = :p",
        "ExpressionAttributeValues": storage.values(p=PENDING_PARTITION),
        "ScanIndexForward": True,
        "Limit": limit,
    }
    if start_after:
        params["ExclusiveStartKey"] = storage.to_item(start_after)
    items, _ = storage.query_page(_table(), **params)
    return items


def pending_position(item: dict[str, Any]) -> dict[str, str]:
    """The ``pendingReview`` index key of a PENDING listing item (where a next page starts after it)."""
    return {"listingId": item["listingId"], "pendingQueue": item["pendingQueue"], "pendingSort": item["pendingSort"]}
