"""Accepting and rejecting requests (``PATCH /v1/match-requests/{id}/status``), both kinds.

* Only the recipient decides (the requester gets 403, anyone else 404), and only from
  PENDING: the update is conditional on ``status = PENDING``, so of two simultaneous
  decisions exactly one wins and the other gets 409 CONFLICT.
* ACCEPTED opens the conversation in the same transaction; the request then carries its
  ``conversationId``. It holds the block ``ConditionCheck`` a new request or message holds: a
  block between the two (either way) refuses it with 403 BLOCKED, since no message could cross
  it; rejecting stays possible.
* One BatchGetItem reads the request, its listing (id recovered from the request id) and the
  deciding user; one TransactWriteItems writes the decision, the list counters it moves
  (PENDING -> the new status, conditional with the decision on PENDING), the conversation (with
  its own counters) and the event.
"""

from __future__ import annotations

from chalicelib.auth.service import Caller
from chalicelib.blocks import api as blocks
from chalicelib.conversations.service import open_conversation_ops
from chalicelib.kernel import clock, errors
from chalicelib.kernel.subject_types import SubjectType
from chalicelib.listings import api as listings
from chalicelib.listings.records import ListingRecord
from chalicelib.match_requests import api as match_requests
from chalicelib.match_requests import ids
from chalicelib.match_requests.models import MatchRequest, RequestStatus, StatusChange
from chalicelib.match_requests.records import RequestRecord
from chalicelib.match_requests.request_transaction import Guard, request_write
from chalicelib.match_requests.service import to_model
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.persistence.transactions import TransactionConflict


def decide(caller: Caller, request_id: str, change: StatusChange) -> MatchRequest:
    """Accept or reject a PENDING request addressed to the caller.

    Parameters
    ----------
    caller:
        The recipient (listing owner or requested user).
    request_id:
        The request.
    change:
        ``status`` ACCEPTED or REJECTED, optional ``reason`` (REJECTED only).

    Returns
    -------
    MatchRequest
        The request in its new status, with ``respondedAt`` (and ``conversationId`` when
        accepted).

    Raises
    ------
    NotFound
        No such request, or the caller is neither its requester nor its recipient.
    Forbidden
        The caller is the requester.
    Blocked
        Accepting while a block stands between the caller and the requester (either way).
    Conflict
        The request is no longer PENDING (a concurrent decision included), or its listing
        has been deleted.
    """
    subject_id = ids.subject_of(request_id)
    if subject_id is None:
        raise errors.NotFound(f"Request '{request_id}' not found")
    bundle = match_requests.read_bundle(request_ids=[request_id], user_ids=[caller.user_id], listing_ids=[subject_id])
    request = bundle.requests.get(request_id)
    if request is None or caller.user_id not in (request["requesterId"], request["recipientId"]):
        raise errors.NotFound(f"Request '{request_id}' not found")
    if caller.user_id != request["recipientId"]:
        raise errors.Forbidden("Only the recipient of a request can accept or reject it")
    if request["status"] != RequestStatus.PENDING:
        raise errors.Conflict(f"The request is already {request['status']}; only PENDING requests can be decided")
    listing: ListingRecord | None = None
    if request["subjectType"] == SubjectType.LISTING:
        listing = bundle.listings.get(request["subjectId"])
        if listing is None:
            raise errors.Conflict("The listing was deleted; its pending requests were rejected")

    now = clock.iso()
    updated: RequestRecord = {**request, "status": RequestStatus(change.status), "respondedAt": now}
    if change.reason is not None:
        updated["reason"] = change.reason
    if listing is not None:
        updated["listingTitle"] = listing["title"]
    conversation_ops: list[TransactItem] = []
    if change.status == RequestStatus.ACCEPTED:
        me = bundle.users.get(caller.user_id)
        participants = [
            (request["requesterId"], request["profile"]["displayName"]),
            (caller.user_id, me.get("displayName", "") if me is not None else ""),
        ]
        updated["conversationId"], conversation_ops = open_conversation_ops(request, participants, now)

    decided = match_requests.decide_op(
        request, change.status, now, reason=change.reason,
        conversation_id=updated.get("conversationId"), listing_title=updated.get("listingTitle"),
    )
    guard = Guard("listing", listings.exists_op(listing["listingId"])) if listing is not None else None
    tx = request_write(decided, updated, RequestStatus.PENDING, guard, listing)
    tx.add_all("conversation", conversation_ops)
    if conversation_ops:
        tx.add("block", blocks.not_blocked_op(request["recipientId"], request["requesterId"]))
    try:
        tx.commit()
    except TransactionConflict as exc:
        if exc.failed("block"):
            raise errors.Blocked("You cannot accept a request from this user") from exc
        if exc.failed("request"):
            raise errors.Conflict("The request was decided meanwhile; only PENDING requests can be decided") from exc
        raise errors.Conflict("The listing was deleted; its pending requests were rejected") from exc
    return to_model(updated)
