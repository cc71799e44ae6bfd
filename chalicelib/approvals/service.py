"""Approval rules (DESIGN §2 "Approvals", docs/approvals.md).

* :func:`list_pending` shows the review queue (PENDING listings, oldest first) and claims nothing;
  it pages with signed cursors (:mod:`chalicelib.kernel.cursors`) bound to the list, the administrator
  and the page size, so an edited or foreign cursor is a ``RuleViolation`` naming ``cursor``.
* :func:`claim` claims tasks from the SQS approval queue; :func:`decide` decides a claimed task.
* :func:`decide_listing` decides a PENDING listing without a claim (the Dashboard's review page);
  its task stays queued and is dropped as stale when claimed later.

``approvalId`` is an opaque token (URL-safe base64 of the task and its SQS receipt handle),
so claims need no extra table. A task whose listing was deleted, changed (another version)
or already decided is dropped: deleted from the queue and never applied.
"""

from __future__ import annotations

from typing import Any

from chalicelib.approvals import queue
from chalicelib.approvals.models import (
    Approval,
    ApprovalDecision,
    ApprovalList,
    ApprovalResult,
    PendingListingPage,
    PendingListingQuery,
    PendingReview,
    ReviewQueue,
)
from chalicelib.audit import api as audit
from chalicelib.audit.records import AuditAction
from chalicelib.auth.service import Caller
from chalicelib.kernel import clock, cursors, errors
from chalicelib.listings import api as listings
from chalicelib.listings import status
from chalicelib.listings.models import Listing
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.service import to_model
from chalicelib.listings.status import Transition
from chalicelib.persistence.transactions import ConditionFailed
from chalicelib.users import api as users
from chalicelib.users.records import UserRecord

DEFAULT_REJECTION_REASON = "Rejected by an administrator"


def encode_approval_id(task: queue.Task) -> str:
    """The opaque, URL-safe ``approvalId`` of a claimed task, signed (:func:`chalicelib.kernel.cursors.sign_token`):
    a decision acts on the listing and the claim the id names, so neither may be edited."""
    return cursors.sign_token(["approval", task.receipt, task.listing_id, task.version, task.enqueued_at])


def decode_approval_id(approval_id: str) -> queue.Task:
    """Inverse of :func:`encode_approval_id`.

    Raises
    ------
    NotFound
        Not an approval id this service issued, or edited.
    """
    try:
        kind, receipt, listing_id, version, enqueued_at = cursors.open_token(approval_id)
        if kind != "approval" or type(version) is not int:
            raise TypeError("not an approval")
        return queue.Task(str(receipt), str(listing_id), version, str(enqueued_at))
    except (ValueError, TypeError) as exc:  # InvalidCursor is a ValueError
        raise errors.NotFound("Unknown approval id") from exc


def _is_current(listing: ListingRecord | None, task: queue.Task) -> bool:
    return listing is not None and status.awaiting_review(listing["status"]) and int(listing["version"]) == task.version


#: The cursor scope's route of the review queue, shared by ``GET /v1/admin/approvals`` and the
#: Dashboard's review page (one list, as ``listings.mine`` is for the API and the Listings page).
PENDING_ROUTE = "approvals.pending"


def list_pending(caller: Caller, query: PendingListingQuery) -> PendingListingPage:
    """PENDING listings awaiting review, oldest submission first, ``query.pageSize`` per page.

    Claims nothing and changes nothing (one Query of the sparse ``pendingReview`` index plus
    one BatchGetItem of the owners). ``nextCursor`` is a signed cursor
    (:mod:`chalicelib.kernel.cursors`) bound to this list, ``caller`` and ``pageSize``.

    Raises
    ------
    RuleViolation
        ``cursor`` is malformed, edited, or was issued for another query (another route,
        administrator or ``pageSize``); ``details`` names ``cursor``.
    """
    items, owners, next_cursor = _pending_page(caller, query)
    return PendingListingPage(
        listings=[to_model(i, owners.get(i["ownerId"])) for i in items], pageSize=query.pageSize, nextCursor=next_cursor
    )


def _pending_page(caller: Caller, query: PendingListingQuery) -> tuple[list[ListingRecord], dict[str, UserRecord], str | None]:
    position = query.page_query().position_in(PENDING_ROUTE, caller.user_id)
    items, last_key = listings.pending_page(position.page_size, after=position.key)
    owners = users.get_users(list({i["ownerId"] for i in items})) if items else {}
    return items, owners, position.next_cursor(last_key is not None, last_key)


def review_queue(caller: Caller, query: PendingListingQuery) -> ReviewQueue:
    """As :func:`list_pending`, with each listing's ``version`` (the Dashboard binds its decision,
    :func:`decide_listing`, to the version the administrator read). Claims nothing.

    Its cursors are those of :func:`list_pending` (same list, administrator and page size).

    Raises
    ------
    RuleViolation
        As :func:`list_pending` (``details`` names ``cursor``).
    """
    items, owners, next_cursor = _pending_page(caller, query)
    return ReviewQueue(
        reviews=[PendingReview(listing=to_model(i, owners.get(i["ownerId"])), version=int(i["version"]),
                               approvedMeta=i.get("approvedMeta")) for i in items],
        nextCursor=next_cursor,
    )


def claim(max_tasks: int) -> ApprovalList:
    """Claim up to ``max_tasks`` pending reviews, dropping stale tasks on the way."""
    tasks = queue.receive(max_tasks)
    found = listings.get_many([t.listing_id for t in tasks]) if tasks else {}
    current, stale, seen = [], [], set()
    for task in tasks:
        # The outbox stream delivers at least once, so one submission may have queued two tasks.
        if _is_current(found.get(task.listing_id), task) and (task.listing_id, task.version) not in seen:
            seen.add((task.listing_id, task.version))
            current.append(task)
        else:
            stale.append(task.receipt)
    queue.delete_many(stale)
    owners = users.get_users(list({found[t.listing_id]["ownerId"] for t in current})) if current else {}
    return ApprovalList(
        approvals=[
            Approval(
                approvalId=encode_approval_id(t),
                listingId=t.listing_id,
                listing=to_model(found[t.listing_id], owners.get(found[t.listing_id]["ownerId"])),
                enqueuedAt=t.enqueued_at,
            )
            for t in current
        ]
    )


def decide(approval_id: str, body: ApprovalDecision, actor_id: str) -> ApprovalResult:
    """Approve (PENDING -> ACTIVE) or reject (PENDING -> REJECTED with ``statusReason``).

    The decision and its audit entry (actor ``actor_id``, the deciding administrator) are one
    transaction.

    Raises
    ------
    NotFound
        Unknown approval id, a claim SQS no longer honours (forged or expired), or the listing
        no longer exists (task dropped).
    Conflict
        The listing changed since the task was queued or was already decided (task dropped);
        or the decision approves and the listing's owner is suspended (the task stays queued:
        it can still be rejected).
    """
    task = decode_approval_id(approval_id)
    listing = listings.get(task.listing_id)
    if listing is None:
        queue.delete(task.receipt)
        raise errors.NotFound("The listing was deleted; the task was dropped")
    if not _is_current(listing, task):
        queue.delete(task.receipt)
        raise _stale_task()
    owner = _refuse_if_suspended(listing, body)
    try:
        queue.hold(task.receipt)
    except queue.ClaimLostError as exc:
        # Never apply a decision without a claim this queue issued and still holds.
        raise errors.NotFound("Unknown or expired approval id; claim the task again") from exc
    try:
        updated = _decide_if_pending(listing, body, task.version, actor_id)
    except ConditionFailed as exc:
        _refuse_if_suspended(listing, body)  # suspended since the check above: the task stays queued
        queue.delete(task.receipt)
        raise _stale_task() from exc
    queue.delete(task.receipt)
    return ApprovalResult(approvalId=approval_id, decision=body.decision, listing=_with_owner(updated, owner))


def _stale_task() -> errors.Conflict:
    return errors.Conflict("The listing changed or was decided since this task was queued; the task was dropped")


def _refuse_if_suspended(listing: ListingRecord, body: ApprovalDecision) -> UserRecord | None:
    """Refuse to approve a listing whose owner is suspended (a suspended account publishes nothing:
    docs/trust-and-safety.md, "Suspension and reinstatement"); rejecting it stays possible.

    Returns
    -------
    UserRecord | None
        The owner as read for an approval (the answer's ``owner`` reuses it); ``None`` when
        ``body`` rejects (nothing read) or the owner is gone.

    Raises
    ------
    Conflict
        ``body`` approves and the owner is suspended.
    """
    if body.decision != "approve":
        return None
    owner = users.get_user(listing["ownerId"])
    if owner is not None and users.is_suspended(owner):
        raise errors.Conflict("The listing's owner is suspended: reject the listing, or reinstate the owner first")
    return owner


def _with_owner(updated: ListingRecord, owner: UserRecord | None) -> Listing:
    """``updated`` as the API shows it, with ``owner`` when the decision already read it."""
    return to_model(updated, owner if owner is not None else users.get_user(updated["ownerId"]))


def _decide_if_pending(listing: ListingRecord, body: ApprovalDecision, version: int, actor_id: str) -> ListingRecord:
    """Approve or reject ``listing`` if it is still PENDING at ``version`` (one conditional
    transaction holding the decision's audit entry by ``actor_id``; an approval also holds the
    check that the owner is not suspended).

    Raises
    ------
    ConditionFailed
        The listing is gone, no longer PENDING, or at another version; or, approving, the
        owner is suspended.
    """
    if body.decision == "approve":
        entry = audit.entry_op(actor_id, AuditAction.LISTING_APPROVE, listing["listingId"], {"version": version})
        owner = users.not_suspended_op(listing["ownerId"])
        return listings.transition(listing, Transition.APPROVE, clock.iso(), version=version, extra=[entry, owner])
    reason = body.reason or DEFAULT_REJECTION_REASON
    entry = audit.entry_op(actor_id, AuditAction.LISTING_REJECT, listing["listingId"], {"version": version, "reason": reason})
    return listings.transition(listing, Transition.REJECT, clock.iso(), reason=reason, version=version, extra=[entry])


def decide_listing(listing_id: str, body: ApprovalDecision, actor_id: str, version: int | None = None) -> Listing:
    """Approve or reject a PENDING listing without a claim (the Dashboard's review page).

    The decision applies only to the version the administrator saw (``version``; the current
    one when ``None``), atomically (condition expression on status and version). The listing's
    queued task stays in the approval queue and is dropped as stale when claimed (its listing
    is no longer PENDING), so nothing is decided twice.

    Parameters
    ----------
    listing_id:
        The listing to decide.
    body:
        ``{decision, reason?}`` as for :func:`decide`.
    actor_id:
        The deciding administrator (the audit entry's actor, written in the decision's transaction).
    version:
        The listing ``version`` the decision is about (e.g. from the page the administrator read).

    Returns
    -------
    Listing
        The listing after the decision (ACTIVE or REJECTED).

    Raises
    ------
    NotFound
        No such listing.
    Conflict
        The listing is not PENDING (already decided) or is at another version than ``version``;
        or the decision approves and the listing's owner is suspended.
    """
    listing = listings.get(listing_id)
    if listing is None:
        raise errors.NotFound(f"Listing '{listing_id}' not found")
    expected = int(listing["version"]) if version is None else version
    if not status.awaiting_review(listing["status"]):
        raise errors.Conflict("The listing changed or was already decided; read it again")
    owner = _refuse_if_suspended(listing, body)
    try:
        updated = _decide_if_pending(listing, body, expected, actor_id)
    except ConditionFailed as exc:
        if listings.get(listing_id) is None:
            raise errors.NotFound(f"Listing '{listing_id}' not found") from exc
        _refuse_if_suspended(listing, body)
        raise errors.Conflict("The listing changed or was already decided; read it again") from exc
    return _with_owner(updated, owner)


def enqueue_submitted(data: dict[str, Any], created_at: str) -> None:
    """Turn a ``listing.submitted`` outbox event into an approval task."""
    queue.send_task(data["listingId"], int(data["version"]), created_at)
