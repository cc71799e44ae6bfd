"""The stored shape of a listing: what the listings repository returns and takes (Listings table items).

``status`` is the :class:`~chalicelib.listings.status.ListingStatus` enum, converted on every
read by :func:`record`, so a rule compares enums, never free strings. While ACTIVE an item also
holds the sparse search-index attributes of :mod:`chalicelib.listings.index` (not
declared here: their names depend on the geohash precisions); while PENDING it holds the
``pendingReview`` index attributes (``pendingQueue``, ``pendingSort``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict, cast

from chalicelib.listings.status import ListingStatus


class ListingRecord(TypedDict):
    """A listing as stored (spec §2 Listing; DESIGN §2 "Listings")."""

    listingId: str
    ownerId: str
    categoryKey: str
    roleKey: str
    title: str
    #: Validated meta values by field key (:mod:`chalicelib.listings.meta`).
    meta: dict[str, str]
    channels: list[str]
    webhookIds: list[str]
    status: ListingStatus
    #: Incremented on every change; approval tasks and ``If-Match`` carry it (optimistic lock).
    version: int
    #: Folded, de-duplicated words of the searched fields (``q`` matches word prefixes).
    searchText: str
    #: ISO 8601 UTC.
    createdAt: str
    updatedAt: str
    #: The administrator's reason of a REJECTED listing.
    statusReason: NotRequired[str]
    #: Match requests ever sent to the listing (kept by :mod:`chalicelib.match_requests.guards`;
    #: deletion reads it to know whether to look for requests).
    requestCount: NotRequired[int]
    #: ``meta`` as last approved (written by the approval's own update), the review page's diff base.
    approvedMeta: NotRequired[dict[str, str]]
    #: ``pendingReview`` index attributes, while PENDING.
    pendingQueue: NotRequired[str]
    pendingSort: NotRequired[str]


def record(item: Mapping[str, Any]) -> ListingRecord:
    """The typed record of a Listings item as read (the status enum in place of its string).

    Raises
    ------
    ValueError
        ``status`` is not a known value (a corrupt item).
    """
    return cast(ListingRecord, {**item, "status": ListingStatus(item["status"])})
