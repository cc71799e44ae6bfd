"""Approval rules (DESIGN §2 "Approvals").

``approvalId`` is an opaque token (URL-safe base64 of the task and its SQS receipt handle),
so claims need no extra table. A task whose listing was deleted, changed (another version)
or already decided is dropped: deleted from the queue and never applied.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from chalicelib import clock, errors, storage
from chalicelib.approvals import queue
from chalicelib.approvals.models import Approval, ApprovalDecision, ApprovalList, ApprovalResult
from chalicelib.listings import repository as listings
from chalicelib.listings.models import ListingStatus
from chalicelib.listings.service import to_model
from chalicelib.users import repository as users

DEFAULT_REJECTION_REASON = "Rejected by an administrator"


def encode_approval_id(task: queue.Task) -> str:
    """The opaque, URL-safe ``approvalId`` of a claimed task."""
    raw = json.dumps([task.receipt, task.listing_id, task.version, task.enqueued_at], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_approval_id(approval_id: str) -> queue.Task:
    """Inverse of :func:`encode_approval_id`.

    Raises
    ------
    NotFoundError
        Not an approval id this service issued.
    """
    try:
        raw = base64.urlsafe_b64decode(approval_id + "=" * (-len(approval_id) % 4))
        receipt, listing_id, version, enqueued_at = json.loads(raw)
        return queue.Task(str(receipt), str(listing_id), int(version), str(enqueued_at))
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError) as exc:
        raise errors.NotFoundError("Unknown approval id") from exc


def _is_current(listing: dict[str, Any] | None, task: queue.Task) -> bool:
    return listing is not None and listing["status"] == ListingStatus.PENDING and int(listing["version"]) == task.version


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


def decide(approval_id: str, body: ApprovalDecision) -> ApprovalResult:
    """Approve (PENDING -> ACTIVE) or reject (PENDING -> REJECTED with ``statusReason``).

    Raises
    ------
    NotFoundError
        Unknown approval id, a claim SQS no longer honours (forged or expired), or the listing
        no longer exists (task dropped).
    ConflictError
        The listing changed since the task was queued or was already decided (task dropped).
    """
    task = decode_approval_id(approval_id)
    listing = listings.get(task.listing_id)
    now = clock.iso()
    try:
        if not _is_current(listing, task):
            raise storage.ConditionFailed("stale task")
        assert listing is not None
        try:
            queue.hold(task.receipt)
        except queue.ClaimLostError as exc:
            # Never apply a decision without a claim this queue issued and still holds.
            raise errors.NotFoundError("Unknown or expired approval id; claim the task again") from exc
        if body.decision == "approve":
            updated = listings.activate(listing, ListingStatus.PENDING.value, now, version=task.version)
        else:
            updated = listings.deactivate(
                listing, ListingStatus.PENDING.value, ListingStatus.REJECTED.value, now,
                reason=body.reason or DEFAULT_REJECTION_REASON, version=task.version,
            )
    except storage.ConditionFailed as exc:
        queue.delete(task.receipt)
        if listing is None:
            raise errors.NotFoundError("The listing was deleted; the task was dropped") from exc
        raise errors.ConflictError(
            "The listing changed or was decided since this task was queued; the task was dropped"
        ) from exc
    queue.delete(task.receipt)
    return ApprovalResult(approvalId=approval_id, decision=body.decision, listing=to_model(updated, users.get_user(updated["ownerId"])))


def enqueue_submitted(data: dict[str, Any], created_at: str) -> None:
    """Turn a ``listing.submitted`` outbox event into an approval task."""
    queue.send_task(data["listingId"], int(data["version"]), created_at)
