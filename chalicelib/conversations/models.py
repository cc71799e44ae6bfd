"""Request and response models of conversations and messages (spec §2 "Conversation and message")."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, ConfigDict, StringConstraints

from chalicelib.json_types import MULTI_LINE, NON_BLANK, Timestamp
from chalicelib.model_base import Model
from chalicelib.pagination import Envelope, PageQuery
from chalicelib.subjects import SubjectType

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


class LeaveResult(Model):
    """Response of ``DELETE /v1/conversations/{id}``."""

    success: bool = True
