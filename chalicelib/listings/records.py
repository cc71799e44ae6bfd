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
from chalicelib.listings.status_history import StatusEntry
from chalicelib.persistence.record_check import checked


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
    #: The listing's match requests (kept by :func:`chalicelib.listings.repository.count_request_op` and
    #: ``uncount_request_op``; deletion reads it to know whether to look for requests).
    requestCount: NotRequired[int]
    #: ``meta`` as last approved (written by the approval's own update), the review page's diff base.
    approvedMeta: NotRequired[dict[str, str]]
    #: The newest status changes, oldest first (:mod:`chalicelib.listings.status_history`; absent
    #: on a listing whose status has not changed since before the history was kept).
    statusHistory: NotRequired[list[StatusEntry]]
    #: ``pendingReview`` index attributes, while PENDING.
    pendingQueue: NotRequired[str]
    pendingSort: NotRequired[str]


def record(item: Mapping[str, Any]) -> ListingRecord:
    """The typed record of a Listings item as read (the status enum in place of its string).

    Raises
    ------
    chalicelib.persistence.record_check.MalformedRecord
        A field is missing, of another type, or ``status`` is not a known value (the field is named).
    """
    return checked(ListingRecord, item, "listingId", enums={"status": ListingStatus})


def scanned(item: Mapping[str, Any]) -> ListingRecord:
    """A search candidate read from a listing index, converted like :func:`record` but not checked.

    For reads of many candidates that a filter mostly drops (up to a read's ``Limit`` per
    partition): the listings shown are read again by id (:func:`chalicelib.listings.repository.get_many`), and that read
    is checked. So the check stays out of the scan loop (docs/architecture.md, "Records
    checked where they enter").

    Raises
    ------
    ValueError
        ``status`` is not a known value.
    """
    return cast(ListingRecord, {**item, "status": ListingStatus(item["status"])})
