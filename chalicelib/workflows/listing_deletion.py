"""Deleting a listing rejects its pending requests (reason "listing deleted"); conversations stay.

The first transaction deletes the listing (conditional on its owner and on ``requestCount``
matching the requests found, see :func:`chalicelib.listings.api.delete_counted_op`) together with as
many rejections as fit; each rejection is two items (the request update and its
``match_request.rejected`` event), so the first transaction carries up to
:data:`FIRST_CHUNK` requests and each further one :data:`CHUNK`. Once the listing is gone no
request can be created or decided for it (both are conditional on the listing); a request of a
later chunk decided between the read and the delete simply drops out of its chunk, which is
written again without it (:func:`_reject_remaining`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from aws_lambda_powertools import Logger

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
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.persistence.transactions import MAX_ITEMS, Transaction, TransactionConflict

logger = Logger(service="matching-service")

#: The reason written on requests rejected by their listing's deletion (DESIGN §2).
LISTING_DELETED_REASON = "listing deleted"
#: Attempts of a deletion while requests for the listing keep arriving.
DELETE_ATTEMPTS = 4
#: Items of the deleting transaction besides the rejections: the delete, the search counter's
#: copies (``listings.counters.COUNTER_REPLICAS``) and the owner's listing counter
#: (:mod:`chalicelib.listings.owner_list`).
FIXED_ITEMS = 2 + COUNTER_REPLICAS
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
    ``match_request.rejected`` events) in the deleting transaction, chunked when there are
    many (:func:`delete_listing_rejecting_requests`), moving the list counters with them; conversations stay.

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


def _add_rejections(tx: Transaction, requests: Sequence[RequestRecord], listing: ListingRecord, responded_at: str) -> None:
    """Add the rejection of each request (conditional on PENDING) as item ``request:<id>``, its
    event, and the list counters they move (summed per counter item: the owner's and the
    listing's are shared, :data:`SHARED_COUNTERS`)."""
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
    """Delete ``listing`` and reject its PENDING requests.

    Parameters
    ----------
    listing:
        The listing item as just read (``ownerId``, ``status``, ``requestCount``, ``title``,
        ``webhookIds``); the delete is conditional on that status.
    extra_ops:
        At most :data:`FIXED_ITEMS` - 2 more ops of the deleting transaction (the search
        counter's decrement of an ACTIVE listing).
    at_version:
        Delete only if the listing is still at the ``version`` read (``If-Match``).

    Returns
    -------
    int
        The number of requests rejected.

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
    first, rest = pending[:FIRST_CHUNK], pending[FIRST_CHUNK:]
    version = int(listing["version"]) if at_version else None
    tx = Transaction().add(
        "listing", listings.delete_counted_op(listing_id, owner_id, len(requests), listing["status"], version)
    )
    tx.add_all("counters", extra_ops)
    tx.add("counters:owner", listings.owner_count_op(owner_id, -1))
    if first:
        _add_rejections(tx, first, listing, now)
    tx.commit()
    for start in range(0, len(rest), CHUNK):
        _reject_remaining(rest[start : start + CHUNK], listing, now)
    return len(pending)


def _reject_remaining(chunk: list[RequestRecord], listing: ListingRecord, responded_at: str) -> None:
    """Reject one later chunk after the listing is gone; never raises (the delete has committed).

    A request whose PENDING condition fails was decided just before the delete: it is left out
    and the rest of the chunk written again. Anything else is logged with the ids left PENDING.
    """
    while chunk:
        tx = Transaction()
        _add_rejections(tx, chunk, listing, responded_at)
        try:
            tx.commit()
            return
        except TransactionConflict as exc:
            still_pending = [request for request in chunk if not exc.failed(f"request:{request['requestId']}")]
            if len(still_pending) == len(chunk):  # no request's condition failed: nothing to leave out
                logger.error("rejecting requests of a deleted listing failed", extra={"listingId": listing["listingId"]})
                return
            chunk = still_pending
        except Exception:
            logger.exception(
                "pending requests of a deleted listing were not rejected",
                extra={"listingId": listing["listingId"], "requestIds": [r["requestId"] for r in chunk]},
            )
            return
