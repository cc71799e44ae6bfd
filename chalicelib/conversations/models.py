"""Request and response models of conversations and messages (spec §2 "Conversation and message")."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, ConfigDict, Field, StringConstraints

from chalicelib.edge import path_ids
from chalicelib.kernel.json_types import MULTI_LINE, NON_BLANK, Timestamp
from chalicelib.kernel.model_base import Model
from chalicelib.kernel.pagination import Envelope, PageQuery
from chalicelib.kernel.subject_types import SubjectType

#: Longest message, in characters (Unicode code points).
MAX_CONTENT_LENGTH = 4000


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must contain a non-whitespace character")
    return value


class MessageCreate(Model):
    """Body of ``POST /v1/conversations/{id}/messages``: 1 to 4000 characters, not only whitespace."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"content": "Thanks! When can we talk?"}]})
    content: Annotated[
        str, StringConstraints(min_length=1, max_length=MAX_CONTENT_LENGTH, pattern=NON_BLANK), AfterValidator(_not_blank), MULTI_LINE
    ]


class Message(Model):
    """A message; ``isApiSent`` is true for every message sent through this API."""

    messageId: str
    conversationId: str
    senderId: str
    senderName: str
    content: str
    isApiSent: bool
    createdAt: Timestamp


class Participant(Model):
    """A participant of a conversation; ``left`` once they have left it."""

    userId: str
    displayName: str
    left: bool = False


class Conversation(Model):
    """A conversation as the caller sees it; ``otherLeft`` is true when the other participant left."""

    conversationId: str
    subjectType: SubjectType
    subjectId: str
    requestId: str
    participants: list[Participant]
    otherLeft: bool
    lastMessage: Message | None = None
    messageCount: int
    unreadCount: int = Field(
        description="Messages from the other participant after the caller's read marker (0 when all are read)."
    )
    lastReadMessageId: str | None = Field(
        default=None, description="The caller's read marker: the newest message they marked read (null: none)."
    )
    createdAt: Timestamp
    updatedAt: Timestamp


class ConversationPage(Envelope):
    """Envelope ``{conversations, total, page, pageSize}``, most recently active first."""

    conversations: list[Conversation]


class MessagePage(Envelope):
    """Envelope ``{messages, total, page, pageSize}``, oldest first."""

    messages: list[Message]


class ConversationListQuery(PageQuery):
    """Query of ``GET /v1/conversations``: no ``subjectType`` lists both kinds."""

    subjectType: SubjectType | None = None


class ReadMarkerUpdate(Model):
    """Body of ``POST /v1/conversations/{id}/read``: the newest message read (omitted: the conversation's newest)."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"messageId": "msg_01J9ZK7Q2Y4V8W3X5N6M7P8R9S"}, {}]}
    )
    messageId: Annotated[str, StringConstraints(min_length=1, max_length=path_ids.MAX_LENGTH)] | None = Field(
        default=None,
        description="A message of this conversation; the marker moves to it (backwards too: mark as unread). "
        "Omitted: the conversation's newest message.",
    )


class ReadState(Model):
    """The caller's read state of one conversation (response of ``POST /v1/conversations/{id}/read``)."""

    model_config = ConfigDict(json_schema_extra={"examples": [
        {"conversationId": "cnv_01J9ZK6M4T2N8QX5R7V3W9Y1B0", "lastReadMessageId": "msg_01J9ZK7Q2Y4V8W3X5N6M7P8R9S",
         "unreadCount": 0},
    ]})
    conversationId: str
    lastReadMessageId: str | None = Field(description="The read marker (null: nothing read).")
    unreadCount: int = Field(description="Messages from the other participant after the marker.")


class UnreadSummary(Model):
    """Response of ``GET /v1/me/unread``."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"unreadCount": 3}]})
    unreadCount: int = Field(
        description="Messages from other participants after the caller's read markers, over every conversation the "
        "caller has not left."
    )


class LeaveResult(Model):
    """Response of ``DELETE /v1/conversations/{id}``."""

    success: bool = True
