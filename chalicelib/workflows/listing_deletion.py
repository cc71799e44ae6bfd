"""Deleting a listing rejects its pending requests (reason "listing deleted"); conversations stay.

The deleting transaction deletes the listing (conditional on its owner and on ``requestCount``
matching the requests found, see :func:`chalicelib.listings.api.delete_counted_op`) together with as
many rejections as fit; each rejection is three items (the request update, its
``match_request.rejected`` event and its requester's list counter), so it carries up to
:data:`FIRST_CHUNK` requests. When more are pending, the same transaction writes a
:data:`~chalicelib.persistence.outbox.LISTING_DELETED` event, and its stream consumer
(:mod:`chalicelib.workflows.handlers`) rejects the rest, :data:`CHUNK` per transaction: a fault after the
delete leaves the event, which the stream retries, never a request PENDING for good. Once the
listing is gone no request can be created or decided for it (both are conditional on the
listing); a request decided just before its rejection drops out of its chunk
(:func:`_reject_chunk`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from chalicelib.auth.service import Caller
from chalicelib.edge.conditional import check_version
from chalicelib.kernel import clock, errors
from chalicelib.kernel.pagination import Deleted
from chalicelib.listings import api as listings
from chalicelib.listings.counters import COUNTER_REPLICAS
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.service import owned
from chalicelib.match_requests import api as match_requests
from chalicelib.match_requests.events import request_event_op
from chalicelib.match_requests.models import RequestStatus
from chalicelib.match_requests.records import RequestRecord
from chalicelib.persistence import outbox
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.persistence.transactions import MAX_ITEMS, Transaction, TransactionConflict

#: The reason written on requests rejected by their listing's deletion (DESIGN §2).
LISTING_DELETED_REASON = "listing deleted"
#: Attempts of a deletion while requests for the listing keep arriving.
DELETE_ATTEMPTS = 4
#: Items of the deleting transaction besides the rejections: the delete, the search counter's
#: copies (``listings.counters.COUNTER_REPLICAS``), the owner's listing counter
#: (:mod:`chalicelib.listings.owner_list`) and the :data:`~chalicelib.persistence.outbox.LISTING_DELETED`
#: event of the requests left to reject.
FIXED_ITEMS = 3 + COUNTER_REPLICAS
#: Counter items every rejection transaction updates once for all its requests: the owner's
#: received list and the listing's list (:mod:`chalicelib.match_requests.list_indexes`).
SHARED_COUNTERS = 2
#: Items per rejection: the request, its event and its requester's sent-list counter.
ITEMS_PER_REJECTION = 3
#: Requests rejected in the deleting transaction.
FIRST_CHUNK = (MAX_ITEMS - FIXED_ITEMS - SHARED_COUNTERS) // ITEMS_PER_REJECTION
#: Requests rejected per later transaction.
CHUNK = (MAX_ITEMS - SHARED_COUNTERS) // ITEMS_PER_REJECTION


def delete_listing(caller: Caller, listing_id: str, expected_version: int | None = None) -> Deleted:
    """Delete the caller's listing (404 for everyone afterwards), rejecting its pending requests.

    Pending requests become REJECTED with reason "listing deleted" (and their
    ``match_request.rejected`` events), moving the list counters with them, in the deleting
    transaction; beyond :data:`FIRST_CHUNK` of them, right after it, by the stream consumer
    (:func:`delete_listing_rejecting_requests`). Conversations stay.

    Raises
    ------
    NotFound, Forbidden
        No such listing; not the caller's.
    Conflict
        Requests kept arriving during every attempt (retry).
    PreconditionFailed
        ``expected_version`` (``If-Match``) is not the listing's version (412); the delete is
        conditional on the version read, so a change in between is caught on the next attempt.
    """
    for attempt in range(DELETE_ATTEMPTS):
        item = owned(caller, listing_id)
        check_version(int(item["version"]), expected_version)
        try:
            delete_listing_rejecting_requests(
                item, listings.leave_active_ops(item, item["status"]), at_version=expected_version is not None
            )
        except TransactionConflict:
            time.sleep(0.05 * 2**attempt)  # a request arrived or the index lags: read again
            continue
        return Deleted(id=listing_id)
    raise errors.Contended("Requests for this listing kept arriving; retry the deletion")


def _rejected(request: RequestRecord, responded_at: str) -> RequestRecord:
    return {**request, "status": RequestStatus.REJECTED, "reason": LISTING_DELETED_REASON, "respondedAt": responded_at}


def _add_rejections(
    tx: Transaction, requests: Sequence[RequestRecord], listing: Mapping[str, Any], responded_at: str
) -> None:
    """Add the rejection of each request (conditional on PENDING) as item ``request:<id>``, its
    event (``listing``: ``title`` and ``webhookIds``), and the list counters they move (summed per
    counter item: the owner's and the listing's are shared, :data:`SHARED_COUNTERS`)."""
    for request in requests:
        tx.add(f"request:{request['requestId']}", match_requests.decide_op(
            request, RequestStatus.REJECTED.value, responded_at, reason=LISTING_DELETED_REASON,
        ))
        tx.add(f"event:{request['requestId']}", request_event_op(_rejected(request, responded_at), listing))
    changes = [(request, RequestStatus.PENDING.value, RequestStatus.REJECTED.value) for request in requests]
    tx.add_all("counters:requests", match_requests.counter_ops(changes))


def delete_listing_rejecting_requests(
    listing: ListingRecord, extra_ops: Sequence[TransactItem] = (), at_version: bool = False
) -> int:
    """Delete ``listing`` and reject its PENDING requests: the first :data:`FIRST_CHUNK` in the
    deleting transaction, the rest by the stream consumer of the
    :data:`~chalicelib.persistence.outbox.LISTING_DELETED` event that transaction writes.

    Parameters
    ----------
    listing:
        The listing item as just read (``ownerId``, ``status``, ``requestCount``, ``title``,
        ``webhookIds``); the delete is conditional on that status.
    extra_ops:
        At most :data:`FIXED_ITEMS` - 3 more ops of the deleting transaction (the search
        counter's decrement of an ACTIVE listing).
    at_version:
        Delete only if the listing is still at the ``version`` read (``If-Match``).

    Returns
    -------
    int
        The number of PENDING requests found (all of them rejected now or by the consumer).

    Raises
    ------
    TransactionConflict
        The listing is gone, or has more requests than the ``subjectNewest`` index returned (a
        request arrived meanwhile or the index lags): read the listing again and retry.
    """
    listing_id, owner_id = listing["listingId"], listing["ownerId"]
    requests = match_requests.list_for_subject(listing_id) if int(listing.get("requestCount", 0)) else []
    pending = [r for r in requests if r["status"] == RequestStatus.PENDING]
    now = clock.iso()
    version = int(listing["version"]) if at_version else None
    tx = Transaction().add(
        "listing", listings.delete_counted_op(listing_id, owner_id, len(requests), listing["status"], version)
    )
    tx.add_all("counters", extra_ops)
    tx.add("counters:owner", listings.owner_count_op(owner_id, -1))
    if pending:
        _add_rejections(tx, pending[:FIRST_CHUNK], listing, now)
    if len(pending) > FIRST_CHUNK:
        tx.add("rest", outbox.event_op(outbox.LISTING_DELETED, {
            "listingId": listing_id, "ownerId": owner_id, "title": listing.get("title"),
            "webhookIds": list(listing.get("webhookIds") or []), "respondedAt": now,
        }))
    tx.commit()
    return len(pending)


def reject_remaining(deleted: Mapping[str, Any]) -> int:
    """Reject the PENDING requests of a deleted listing, :data:`CHUNK` per transaction (the
    consumer of :data:`~chalicelib.persistence.outbox.LISTING_DELETED`; idempotent: a replay finds
    none pending).

    Parameters
    ----------
    deleted:
        The event's ``data``: ``listingId``, ``ownerId``, ``title``, ``webhookIds``, ``respondedAt``
        (ISO 8601 UTC, the deletion's time, written on every rejection).

    Returns
    -------
    int
        The number of requests rejected.

    Raises
    ------
    TransactionConflict
        A chunk was cancelled for another reason than a request decided meanwhile (the stream
        retries the event).
    """
    requests = match_requests.list_for_subject(str(deleted["listingId"]))
    pending = [r for r in requests if r["status"] == RequestStatus.PENDING]
    rejected = 0
    for start in range(0, len(pending), CHUNK):
        rejected += _reject_chunk(pending[start : start + CHUNK], deleted, str(deleted["respondedAt"]))
    return rejected


def _reject_chunk(chunk: list[RequestRecord], listing: Mapping[str, Any], responded_at: str) -> int:
    """Reject one chunk; a request whose PENDING condition fails was decided meanwhile: it is
    left out and the rest written again. Returns the number rejected; raises TransactionConflict
    when no request's condition failed."""
    while chunk:
        tx = Transaction()
        _add_rejections(tx, chunk, listing, responded_at)
        try:
            tx.commit()
            return len(chunk)
        except TransactionConflict as exc:
            still_pending = [request for request in chunk if not exc.failed(f"request:{request['requestId']}")]
            if len(still_pending) == len(chunk):  # no request's condition failed: nothing to leave out
                raise
            chunk = still_pending
    return 0

