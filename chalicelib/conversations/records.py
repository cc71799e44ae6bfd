"""The stored shapes of conversations: what the conversations repository returns and takes.

Items of the Conversations, ConversationMembers and Messages tables (layout in
:mod:`chalicelib.conversations.repository`). ``subjectType`` is the
:class:`~chalicelib.kernel.subject_types.SubjectType` enum, converted on every read, so a rule compares
enums, never free strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from chalicelib.kernel.subject_types import SubjectType
from chalicelib.persistence.record_check import checked


class ParticipantRecord(TypedDict):
    """A participant as the conversation was opened (display name snapshot)."""

    userId: str
    displayName: str


class MessageRecord(TypedDict):
    """A message (Messages item; ``lastMessage`` of a conversation holds the same fields but the keys)."""

    messageId: str
    senderId: str
    senderName: str
    content: str
    #: Spec §2: whether the message was sent through the API (``False``: the Dashboard).
    isApiSent: bool
    #: ISO 8601 UTC.
    createdAt: str
    conversationId: NotRequired[str]
    #: The 1-based sequence number, zero-padded (:func:`chalicelib.conversations.repository.message_key`).
    messageKey: NotRequired[str]


class ConversationRecord(TypedDict):
    """A conversation as stored (opened by an accepted request)."""

    conversationId: str
    subjectType: SubjectType
    subjectId: str
    requestId: str
    participantIds: list[str]
    participants: list[ParticipantRecord]
    #: The exact number of messages (the newest message's sequence number).
    messageCount: int
    #: ISO 8601 UTC.
    createdAt: str
    updatedAt: str
    lastMessage: NotRequired[MessageRecord]
    #: Participants who left (then nobody can send).
    leftBy: NotRequired[list[str]]


class MemberRecord(TypedDict):
    """One participant's entry in the "my conversations" index (ConversationMembers item)."""

    userId: str
    conversationId: str
    subjectType: SubjectType
    #: ISO 8601 UTC of the last activity (orders the caller's list).
    updatedAt: str
    #: Messages from the other participant after the read marker (absent: none).
    unread: NotRequired[int]
    #: The read marker: number of the newest message read (absent: none read).
    readThrough: NotRequired[int]
    #: The read marker's message id.
    lastReadMessageId: NotRequired[str]


def conversation(item: Mapping[str, Any]) -> ConversationRecord:
    """The typed record of a Conversations item as read (checked: MalformedRecord naming the field,
    an unknown ``subjectType`` included)."""
    return checked(ConversationRecord, item, "conversationId", enums={"subjectType": SubjectType})


def member(item: Mapping[str, Any]) -> MemberRecord:
    """The typed record of a ConversationMembers item as read (checked: MalformedRecord naming the field,
    an unknown ``subjectType`` included)."""
    return checked(MemberRecord, item, "conversationId", enums={"subjectType": SubjectType})


def message(item: Mapping[str, Any]) -> MessageRecord:
    """The typed record of a Messages item as read (checked: MalformedRecord naming the field)."""
    return checked(MessageRecord, item, "conversationId")
