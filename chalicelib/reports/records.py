"""The stored shape of a report (Reports table items)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, NotRequired, TypedDict

from chalicelib.persistence.record_check import checked


class ReportSubject(StrEnum):
    """What a report is about."""

    LISTING = "listing"
    PROFILE = "profile"
    MESSAGE = "message"


class ReportReason(StrEnum):
    """Why a user reports (the categories of the large platforms' report forms)."""

    SPAM = "spam"
    SCAM = "scam"
    HARASSMENT = "harassment"
    HATE = "hate"
    INAPPROPRIATE = "inappropriate"
    IMPERSONATION = "impersonation"
    OTHER = "other"


class ReportStatus(StrEnum):
    """A report is open until an administrator decides it."""

    OPEN = "open"
    DECIDED = "decided"


class ReportDecision(StrEnum):
    """An administrator's decision about a report."""

    DISMISS = "dismiss"
    HIDE_LISTING = "hide_listing"
    SUSPEND_USER = "suspend_user"


class ReportRecord(TypedDict):
    """A report as stored."""

    #: ``rpt_`` + a digest of the reporter and the subject (one report per reporter and subject).
    reportId: str
    reporterId: str
    subjectType: ReportSubject
    subjectId: str
    #: The user the subject belongs to (the listing's owner, the profile's user, the message's sender).
    subjectOwnerId: str
    reason: ReportReason
    note: NotRequired[str]
    status: ReportStatus
    #: ISO 8601 UTC.
    createdAt: str
    decision: NotRequired[ReportDecision]
    decidedBy: NotRequired[str]
    decidedAt: NotRequired[str]
    #: ``<0 open | 1 decided>#<createdAt>#<reportId>``: the moderation queue's sort key.
    queueKey: str


def record(item: Mapping[str, Any]) -> ReportRecord:
    """The typed record of a Reports item as read (the enums in place of their strings).

    Raises
    ------
    chalicelib.persistence.record_check.MalformedRecord
        The item lacks a field of the record or holds a value of another type (the field is named).
    """
    found = checked(ReportRecord, item, "reportId", enums={
        "subjectType": ReportSubject, "reason": ReportReason, "status": ReportStatus,
    })
    if "decision" in found:  # optional, so not one of the converted enums
        found["decision"] = ReportDecision(found["decision"])
    return found
