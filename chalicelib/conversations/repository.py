"""Conversations, ConversationMembers and Messages tables (typed records: :mod:`chalicelib.conversations.records`).

* Conversations ``{conversationId}``: ``{conversationId, subjectType, subjectId, requestId,
  participantIds, participants: [{userId, displayName}], messageCount, lastMessage?,
  leftBy?: [userId], createdAt, updatedAt}``.
* ConversationMembers ``{userId, conversationId}``: ``{subjectType, updatedAt}``, one per
  participant who has not left; the "my conversations" index.
* Messages ``{conversationId, messageKey}``: ``messageKey`` is the message's 1-based sequence
  number, zero-padded to :data:`SEQUENCE_DIGITS` digits, so page *n* is one key-range Query
  and ``messageCount`` on the conversation is the exact total.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chalicelib import storage
from chalicelib.config import settings
from chalicelib.conversations import records
from chalicelib.conversations.records import ConversationRecord, MemberRecord, MessageRecord
from chalicelib.users.records import UserRecord
from chalicelib.users.records import record as user_record

SEQUENCE_DIGITS = 10


def _conversations() -> str:
    return settings().CONVERSATIONS_TABLE


def _members() -> str:
    return settings().CONVERSATION_MEMBERS_TABLE


def _messages() -> str:
    return settings().MESSAGES_TABLE


def message_key(sequence: int) -> str:
    """The sort key of message number ``sequence`` (1-based)."""
    return f"{sequence:0{SEQUENCE_DIGITS}d}"


def open_ops(conversation: ConversationRecord, members: Sequence[MemberRecord]) -> list[dict[str, Any]]:
    """Transaction ``Put``s of a new conversation and its member items."""
    ops = [storage.put_op(_conversations(), conversation, condition="attribute_not_exists(conversationId)")]
    ops += [storage.put_op(_members(), member) for member in members]
    return ops


def get(conversation_id: str, consistent: bool = False) -> ConversationRecord | None:
    """The conversation record, or ``None`` (``consistent``: a strongly consistent read)."""
    item = storage.get(_conversations(), {"conversationId": conversation_id}, consistent=consistent)
    return records.conversation(item) if item is not None else None


def get_with_user(conversation_id: str, user_id: str) -> tuple[ConversationRecord | None, UserRecord | None]:
    """The conversation record and a user record in one BatchGetItem (``None`` for a missing one)."""
    config = settings()
    found = storage.batch_get_tables(
        {_conversations(): [{"conversationId": conversation_id}], config.USERS_TABLE: [{"userId": user_id}]}
    )
    conversations, users = found[_conversations()], found[config.USERS_TABLE]
    return (
        records.conversation(conversations[0]) if conversations else None,
        user_record(users[0]) if users else None,
    )


def get_many(conversation_ids: Sequence[str]) -> dict[str, ConversationRecord]:
    """Conversation records by id (BatchGetItem); missing ids are absent."""
    keys = [{"conversationId": i} for i in conversation_ids]
    return {c["conversationId"]: records.conversation(c) for c in storage.batch_get(_conversations(), keys)} if keys else {}


def list_memberships(user_id: str, subject_type: str | None = None) -> list[MemberRecord]:
    """The member items of ``user_id`` (conversations not left), optionally of one subject type."""
    params: dict[str, Any] = {"KeyConditionExpression": "userId = :u"}
    vals: dict[str, Any] = {"u": user_id}
    if subject_type is not None:
        params["FilterExpression"] = "subjectType = :t"
        vals["t"] = subject_type
    return [records.member(i) for i in storage.query(_members(), ExpressionAttributeValues=storage.values(**vals), **params)]


def message_range(conversation_id: str, first: int, last: int) -> list[MessageRecord]:
    """Messages number ``first``..``last`` (inclusive, 1-based), oldest first, in one Query."""
    items = storage.query(
        _messages(),
        KeyConditionExpression="conversationId = :c AND messageKey BETWEEN :a AND :b",
        ExpressionAttributeValues=storage.values(c=conversation_id, a=message_key(first), b=message_key(last)),
        ScanIndexForward=True,
    )
    return [records.message(i) for i in items]


def append_message_ops(conversation: ConversationRecord, message: MessageRecord, sequence: int) -> list[dict[str, Any]]:
    """Transaction ops adding ``message`` as number ``sequence`` of ``conversation``.

    The conversation update is conditional on nobody having left, the sender being a
    participant and ``messageCount`` still being ``sequence - 1`` (a concurrent message takes
    the number first; the caller retries with the next one). Both member items get the new
    activity time, which orders the conversation lists.
    """
    conversation_id = conversation["conversationId"]
    last = {k: message[k] for k in ("messageId", "senderId", "senderName", "content", "isApiSent", "createdAt")}
    previous = sequence - 1
    counted = "messageCount = :prev" if previous else "(attribute_not_exists(messageCount) OR messageCount = :prev)"
    ops = [
        storage.put_op(
            _messages(), {**message, "messageKey": message_key(sequence)}, condition="attribute_not_exists(messageKey)"
        ),
        storage.update_op(
            _conversations(),
            {"conversationId": conversation_id},
            "SET messageCount = :seq, lastMessage = :last, updatedAt = :u",
            condition=f"attribute_not_exists(leftBy) AND contains(participantIds, :sender) AND {counted}",
            ExpressionAttributeValues=storage.values(
                seq=sequence, last=last, u=message["createdAt"], sender=message["senderId"], prev=previous
            ),
        ),
    ]
    ops += [
        storage.update_op(
            _members(),
            {"userId": user_id, "conversationId": conversation_id},
            "SET updatedAt = :u",
            ExpressionAttributeValues=storage.values(u=message["createdAt"]),
        )
        for user_id in conversation["participantIds"]
    ]
    return ops


def leave_ops(conversation_id: str, user_id: str, left_at: str) -> list[dict[str, Any]]:
    """Transaction ops: add ``user_id`` to ``leftBy`` (once) and drop their member item."""
    return [
        storage.update_op(
            _conversations(),
            {"conversationId": conversation_id},
            "SET leftBy = list_append(if_not_exists(leftBy, :empty), :me), updatedAt = :u",
            condition="contains(participantIds, :uid) AND NOT contains(leftBy, :uid)",
            ExpressionAttributeValues=storage.values(empty=[], me=[user_id], uid=user_id, u=left_at),
        ),
        storage.delete_op(_members(), {"userId": user_id, "conversationId": conversation_id}),
    ]
