"""What a conversation is about, for the Dashboard's conversation page: its subject
(the listing's title, or the requested profile), the request that opened it (its message), and,
once the request was accepted, the other party's contact handles.

Which handles: the requester offered ``channels`` with the request (spec §2 "MatchRequest"); the
recipient offers the listing's ``channels`` for a LISTING request and their connected channels
for a PROFILE request (the ``activeChannels`` a requester picks from). Handles are read from the
user's record at view time, so a channel disconnected since is not shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.auth.service import Caller
from chalicelib.conversations.models import Conversation
from chalicelib.kernel.subject_types import SubjectType
from chalicelib.listings import api as listings
from chalicelib.match_requests.models import MatchRequest, RequestStatus
from chalicelib.match_requests.service import get_request
from chalicelib.users import api as users
from chalicelib.users.service import active_channels


@dataclass(frozen=True)
class ConversationContext:
    """The context shown above a conversation's messages.

    Attributes
    ----------
    subject_type:
        ``LISTING`` or ``PROFILE``.
    subject_title:
        The listing's title (as when requested), or the requested profile's display name.
    listing_id:
        The listing of a LISTING conversation (the Dashboard links it for its owner), else ``None``.
    request:
        The request that opened the conversation (its ``message``, ``createdAt``, ``status``).
    handles:
        ``(channel key, handle)`` of the other party, sorted by key; empty until ACCEPTED.
    """

    subject_type: SubjectType
    subject_title: str
    listing_id: str | None
    request: MatchRequest
    handles: list[tuple[str, str]]


def _other_party_channels(request: MatchRequest, other_id: str) -> list[str]:
    if other_id == request.requesterId:
        return list(request.channels)
    if request.subjectType == SubjectType.LISTING and request.listingId:
        listing = listings.get(request.listingId)
        return list(listing["channels"]) if listing else []
    recipient = users.get_user(other_id)
    return active_channels(recipient) if recipient else []


def requester_handles(requests: list[MatchRequest]) -> dict[str, list[tuple[str, str]]]:
    """The handles of the ACCEPTED ones among ``requests`` (a page the caller received, already
    authorized): request id -> ``(channel key, handle)`` of the channels the requester offered,
    sorted by key. One BatchGetItem of the requesters; no read when none was accepted.
    """
    accepted = [r for r in requests if r.status == RequestStatus.ACCEPTED]
    if not accepted:
        return {}
    found = users.get_users(sorted({r.requesterId for r in accepted}))
    handles: dict[str, list[tuple[str, str]]] = {}
    for r in accepted:
        requester = found.get(r.requesterId)
        connected = (requester.get("channels") or {}) if requester else {}
        handles[r.requestId] = sorted((key, str(connected[key]["handle"])) for key in r.channels if key in connected)
    return handles


def conversation_context(caller: Caller, conversation: Conversation) -> ConversationContext:
    """The context of ``conversation`` (already read for the caller, who takes part in it).

    Reads the request (GetItem), then, once accepted, the listing for its channels (LISTING
    request whose recipient is the other party) and the other party's user item.

    Raises
    ------
    NotFound
        The request is gone (never: requests outlive their conversations) or not the caller's.
    """
    request = get_request(caller, conversation.requestId)
    other_id = request.recipientId if caller.user_id == request.requesterId else request.requesterId
    handles: list[tuple[str, str]] = []
    if request.status == RequestStatus.ACCEPTED:
        wanted = _other_party_channels(request, other_id)
        other = users.get_user(other_id)
        connected = (other.get("channels") or {}) if other else {}
        handles = sorted((key, str(connected[key]["handle"])) for key in wanted if key in connected)
    if request.subjectType == SubjectType.LISTING:
        title, listing_id = request.listingTitle or "a listing", request.listingId
    else:
        requested = users.get_user(request.userId or request.recipientId)
        title, listing_id = (requested["displayName"] if requested else "a profile"), None
    return ConversationContext(request.subjectType, str(title), listing_id, request, handles)
