"""The stored shape of an audit entry (AuditLog table items) and the actions it names."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, NotRequired, TypedDict

from chalicelib.persistence.record_check import checked


class AuditAction(StrEnum):
    """What an administrator did, ``<target type>.<verb>`` (the naming of GitHub's audit log)."""

    #: A PENDING listing approved (``POST /v1/admin/approvals/{id}``, the Dashboard's review page).
    LISTING_APPROVE = "listing.approve"
    #: A PENDING listing rejected (details: ``reason``).
    LISTING_REJECT = "listing.reject"
    #: A user created with its first key (``POST /v1/admin/users``; details: ``admin``).
    USER_CREATE = "user.create"
    #: A user's verification level set (``PATCH /v1/admin/users/{id}``; details: ``verifiedLevel``).
    USER_VERIFICATION_LEVEL = "user.verification_level"
    #: A key with the admin scope created: an administrator's new or rolled own key, or the first
    #: key of a user created as an administrator (details: ``keyId``, ``via``).
    ADMIN_KEY_CREATE = "admin_key.create"
    #: A report decided without action (``POST /v1/admin/reports/{id}/decision``; details: ``subjectType``, ``subjectId``).
    REPORT_DISMISS = "report.dismiss"
    #: A report decided by hiding its listing (ACTIVE -> REJECTED; details: ``listingId``, ``reason``).
    REPORT_HIDE_LISTING = "report.hide_listing"
    #: A report decided by suspending the subject's owner (details: ``userId``).
    REPORT_SUSPEND_USER = "report.suspend_user"
    #: A user suspended: keys refused, listings paused, webhooks disabled (details: ``reportId``).
    USER_SUSPEND = "user.suspend"
    #: A suspension lifted (``POST /v1/admin/users/{id}/reinstate``).
    USER_REINSTATE = "user.reinstate"
    #: A user asked for their account's erasure (``DELETE /v1/me``); the actor is that user
    #: (details: ``erasureId``). The erasure's progress is its record (``GET /v1/admin/erasures/{userId}``).
    USER_ERASE = "user.erase"


#: The type of each action's target, by action (the entry's ``targetType``).
TARGET_TYPES: dict[AuditAction, str] = {
    AuditAction.LISTING_APPROVE: "listing",
    AuditAction.LISTING_REJECT: "listing",
    AuditAction.USER_CREATE: "user",
    AuditAction.USER_VERIFICATION_LEVEL: "user",
    AuditAction.ADMIN_KEY_CREATE: "user",
    AuditAction.REPORT_DISMISS: "report",
    AuditAction.REPORT_HIDE_LISTING: "report",
    AuditAction.REPORT_SUSPEND_USER: "report",
    AuditAction.USER_SUSPEND: "user",
    AuditAction.USER_REINSTATE: "user",
    AuditAction.USER_ERASE: "user",
}


class AuditRecord(TypedDict):
    """An audit entry as stored; never changed once written."""

    #: ``aud_`` + a ULID.
    entryId: str
    #: ISO 8601 UTC of the action (its transaction).
    createdAt: str
    #: The acting administrator's user id.
    actorId: str
    action: AuditAction
    #: ``listing``, ``user`` or ``report`` (:data:`TARGET_TYPES`).
    targetType: str
    #: The id of the listing or user acted on.
    targetId: str
    #: The ``X-Request-Id`` of the request that performed the action; absent outside a request.
    requestId: NotRequired[str]
    #: What the action set (e.g. ``{"verifiedLevel": 2}``): small, plain values.
    details: dict[str, Any]
    #: ``<createdAt>#<entryId>``: the sort key of every list index (newest first, unique).
    newest: str


def record(item: Mapping[str, Any]) -> AuditRecord:
    """The typed record of an AuditLog item as read (``action`` as :class:`AuditAction`; checked:
    :class:`~chalicelib.persistence.record_check.MalformedRecord` naming a missing or mistyped field)."""
    return checked(AuditRecord, {**item, "details": dict(item.get("details") or {})}, "entryId",
                   enums={"action": AuditAction})
