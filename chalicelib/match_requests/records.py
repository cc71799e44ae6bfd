"""The stored shape of a request: what the repository returns and takes (Requests table items).

``subjectType`` and ``status`` are the enums (:class:`~chalicelib.kernel.subject_types.SubjectType`,
:class:`~chalicelib.match_requests.models.RequestStatus`), converted on every read by
:func:`record`, so a rule compares enums, never free strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from chalicelib.kernel.subject_types import SubjectType
from chalicelib.match_requests.models import RequestStatus
from chalicelib.persistence.record_check import checked


class RequesterSnapshot(TypedDict):
    """The requester's summary as it was when the request was sent (``profile``)."""

    displayName: str
    verifiedLevel: NotRequired[int]
    country: NotRequired[str]
    socialLinks: NotRequired[dict[str, str]]


class RequestRecord(TypedDict):
    """A match request (``subjectType`` LISTING) or profile request (PROFILE) as stored."""

    requestId: str
    subjectType: SubjectType
    subjectId: str
    requesterId: str
    recipientId: str
    status: RequestStatus
    profile: RequesterSnapshot
    channels: list[str]
    message: str
    createdAt: str
    #: LISTING requests: the listing and its title (as of the request, refreshed by a decision).
    listingId: NotRequired[str]
    listingTitle: NotRequired[str]
    #: PROFILE requests: the requested user.
    userId: NotRequired[str]
    reason: NotRequired[str]
    conversationId: NotRequired[str]
    respondedAt: NotRequired[str]


def record(item: Mapping[str, Any]) -> RequestRecord:
    """The typed record of a Requests item as read (enums in place of their strings).

    Raises
    ------
    chalicelib.persistence.record_check.MalformedRecord
        A field is missing, of another type, or ``subjectType``/``status`` is not a known value (the field is named).
    """
    return checked(RequestRecord, item, "requestId", enums={"subjectType": SubjectType, "status": RequestStatus})
