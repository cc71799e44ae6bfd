"""Request and response models of match and profile requests (spec §2 "Match request / profile request")."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field, RootModel, StringConstraints

from chalicelib.kernel.channels import ChannelKey
from chalicelib.kernel.json_types import MULTI_LINE, NON_BLANK, SINGLE_LINE, Timestamp
from chalicelib.kernel.model_base import Model
from chalicelib.kernel.pagination import Envelope, PageQuery
from chalicelib.kernel.subject_types import SubjectType
from chalicelib.users.models import ProfileSummary

#: Longest request message, in characters (same bound as a conversation message).
MAX_MESSAGE_LENGTH = 4000
#: Longest rejection reason, in characters.
MAX_REASON_LENGTH = 500


class RequestStatus(StrEnum):
    """Request states (spec §3): PENDING until the recipient accepts or rejects it."""

    PENDING = "PENDING"
    ACCEPTED = "ACCEPTED"
    REJECTED = "REJECTED"


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must contain a non-whitespace character")
    return value


ResourceId = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64, pattern=NON_BLANK)]
RequestMessage = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_MESSAGE_LENGTH, pattern=NON_BLANK), AfterValidator(_not_blank), MULTI_LINE
]
Reason = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_REASON_LENGTH), SINGLE_LINE]


def _unique_channels(value: list[ChannelKey]) -> list[ChannelKey]:
    return list(dict.fromkeys(value))


class MatchRequestCreate(Model):
    """Body of ``POST /v1/match-requests``: the listing, a message and the requester's channels."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"listingId": "lst_01JD3Q7ZK8M2V9T4R6W1X5Y0BC", "message": "Hello, is it still free?", "channels": ["telegram"]},
    ]})
    listingId: ResourceId
    message: RequestMessage
    channels: Annotated[list[ChannelKey], Field(min_length=1, max_length=5), AfterValidator(_unique_channels)]


class ProfileRequestCreate(Model):
    """Body of ``POST /v1/profile-requests``: the target user, a message and one channel."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"userId": "usr_01JD3Q5B7N4H2F8K6M0P9R3S1T", "message": "We are hiring a lead engineer.", "channel": "telegram"},
    ]})
    userId: ResourceId
    message: RequestMessage
    channel: ChannelKey


class Accept(Model):
    """``{"status": "ACCEPTED"}``: accept the request (no ``reason``)."""

    model_config = ConfigDict(extra="forbid", title="AcceptRequest")
    status: Literal["ACCEPTED"]


class Reject(Model):
    """``{"status": "REJECTED", "reason"?}``: reject the request, optionally saying why."""

    model_config = ConfigDict(extra="forbid", title="RejectRequest")
    status: Literal["REJECTED"]
    reason: Reason | None = None


class StatusChange(RootModel[Annotated[Accept | Reject, Field(discriminator="status")]]):
    """Body of ``PATCH /v1/match-requests/{id}/status``: one of :class:`Accept` or :class:`Reject`.

    A union discriminated by ``status``, so that the schema itself says that ``reason`` goes
    only with REJECTED (``additionalProperties: false`` on ACCEPTED).
    """

    @property
    def status(self) -> str:
        """``"ACCEPTED"`` or ``"REJECTED"``."""
        return self.root.status

    @property
    def reason(self) -> str | None:
        """The rejection reason (``None`` when accepting or when none was given)."""
        return self.root.reason if isinstance(self.root, Reject) else None


class MatchRequest(Model):
    """A match or profile request as every read returns it.

    ``listingId``/``listingTitle`` are set for LISTING requests, ``userId`` (the requested
    profile) for PROFILE requests. ``profile`` is the requester's summary as it was when the
    request was sent (what the recipient was shown, also in the webhook payload).
    ``conversationId`` is set once the request is ACCEPTED.
    """

    requestId: str
    subjectType: SubjectType
    subjectId: str
    status: RequestStatus
    listingId: str | None = None
    listingTitle: str | None = None
    userId: str | None = None
    requesterId: str
    recipientId: str
    profile: ProfileSummary
    channels: list[str]
    message: str
    reason: str | None = None
    conversationId: str | None = None
    createdAt: Timestamp
    respondedAt: Timestamp | None = None


class RequestPage(Envelope):
    """Envelope ``{requests, total, page, pageSize}``, newest first."""

    requests: list[MatchRequest]


class RequestListQuery(PageQuery):
    """Query of ``/v1/match-requests/mine`` and ``/incoming``: no ``subjectType`` lists both kinds."""

    subjectType: SubjectType | None = None
    status: RequestStatus | None = None


class ListingRequestQuery(PageQuery):
    """Query of ``/v1/match-requests/listing/{id}``."""

    status: RequestStatus | None = None
