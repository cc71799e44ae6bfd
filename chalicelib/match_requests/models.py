"""Request and response models of match and profile requests (spec §2 "Match request / profile request")."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field, StringConstraints, ValidationInfo, field_validator

from chalicelib.channels import ChannelKey
from chalicelib.model_base import Model
from chalicelib.pagination import Envelope, PageQuery
from chalicelib.subjects import SubjectType
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


ResourceId = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)]
RequestMessage = Annotated[str, StringConstraints(min_length=1, max_length=MAX_MESSAGE_LENGTH), AfterValidator(_not_blank)]
Reason = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_REASON_LENGTH)]


def _unique_channels(value: list[ChannelKey]) -> list[ChannelKey]:
    return list(dict.fromkeys(value))


class MatchRequestCreate(Model):
    """Body of ``POST /v1/match-requests``: the listing, a message and the requester's channels."""

    model_config = ConfigDict(extra="forbid")
    listingId: ResourceId
    message: RequestMessage
    channels: Annotated[list[ChannelKey], Field(min_length=1, max_length=5), AfterValidator(_unique_channels)]


class ProfileRequestCreate(Model):
    """Body of ``POST /v1/profile-requests``: the target user, a message and one channel."""

    model_config = ConfigDict(extra="forbid")
    userId: ResourceId
    message: RequestMessage
    channel: ChannelKey


class StatusChange(Model):
    """Body of ``PATCH /v1/match-requests/{id}/status``; ``reason`` only with REJECTED."""

    model_config = ConfigDict(extra="forbid")
    status: Literal["ACCEPTED", "REJECTED"]
    reason: Reason | None = None

    @field_validator("reason")
    @classmethod
    def _reason_only_when_rejecting(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and info.data.get("status") != RequestStatus.REJECTED:
            raise ValueError("only accepted with status REJECTED")
        return value


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
    createdAt: str
    respondedAt: str | None = None


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
